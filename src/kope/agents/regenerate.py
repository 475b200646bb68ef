"""The baseline that debugging is measured against: write the kernel from scratch, k times.

Each sample gets the same prompt (the task's reference), is evaluated on every case with the
integrity gates, and counts as a pass only if that evaluation passes. pass@k is the unbiased
estimator 1 - C(n - c, k) / C(n, k) over n samples with c passes.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from pydantic import BaseModel, Field

from kope.agents.edits import parse_reply
from kope.agents.prompts import render, shown_task
from kope.cases.task import Task, load_task
from kope.evaluate import EvalOptions, Evaluator
from kope.loop import Transcript
from kope.models.base import Message, Model, ModelError, Usage
from kope.protocol.sandbox import SandboxReport


class Sample(BaseModel):
    index: int
    status: str
    """pass, fail, reject, error, no-code or model-error"""
    path: str | None = None
    tokens: Usage = Field(default_factory=Usage)
    detail: str = ""
    numerically_right: bool = False
    sandbox: SandboxReport | None = None


class RegenerateReport(BaseModel):
    task: str
    model: str
    k: int
    samples: list[Sample]
    passes: int
    pass_at_1: float
    pass_at_k: float
    tokens: Usage
    tokens_per_success: float | None
    rejected: int
    """Samples right on every case but rejected by the integrity gates."""
    seconds: float
    note: str = ""


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c correct (Chen et al., 2021)."""
    if n == 0:
        return 0.0
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def regenerate(
    task: Task | str | Path,
    model: Model | None,
    *,
    k: int,
    out_dir: Path,
    evaluator: Evaluator,
    options: EvalOptions | None = None,
    transcript: Path | None = None,
    reply_tokens: int = 8192,
) -> RegenerateReport:
    began = time.monotonic()
    task = task if isinstance(task, Task) else load_task(task)
    options = options or EvalOptions()
    log = Transcript(transcript)
    if model is None:
        return RegenerateReport(
            task=str(task.path),
            model="offline",
            k=k,
            samples=[],
            passes=0,
            pass_at_1=0.0,
            pass_at_k=0.0,
            tokens=Usage(),
            tokens_per_success=None,
            rejected=0,
            seconds=0.0,
            note="regenerating needs a model that writes code: offline, kope only repairs",
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    visible = next((c for c in evaluator.cases(task, options=options) if c.visible), None)
    shown = shown_task(task, visible).rstrip()
    messages = [Message(role="user", content=render("regenerate.j2", reference=shown))]
    samples: list[Sample] = []
    total = Usage()
    for index in range(k):
        try:
            reply = model.complete(messages, max_tokens=reply_tokens)
        except ModelError as exc:
            samples.append(Sample(index=index, status="model-error", detail=str(exc)))
            continue
        tokens = reply.usage
        total = total + tokens
        log.write("sample", index=index, reply=reply.text, usage=reply.usage.model_dump())
        code = parse_reply(reply.text).whole_file
        if code is None:
            samples.append(Sample(index=index, status="no-code", tokens=tokens, detail="no python file in the reply"))
            continue
        path = out_dir / f"sample_{index}.py"
        path.write_text(code)
        result = evaluator.evaluate(task, path, options=options)
        log.write("evaluation", index=index, evaluation=result.model_dump(mode="json"))
        detail = result.error.message[:200] if result.error else ""
        if result.status == "reject":
            detail = "; ".join(f.rule for f in result.integrity.findings if f.severity == "reject")
        right = result.error is None and all(c.passed for c in result.cases)
        samples.append(
            Sample(
                index=index,
                status=result.status,
                path=str(path),
                tokens=tokens,
                detail=detail,
                numerically_right=right,
                sandbox=result.sandbox,
            )
        )
    passes = sum(s.status == "pass" for s in samples)
    rejected = sum(s.status == "reject" and s.numerically_right for s in samples)
    return RegenerateReport(
        task=str(task.path),
        model=model.name,
        k=k,
        samples=samples,
        passes=passes,
        pass_at_1=pass_at_k(len(samples), passes, 1),
        pass_at_k=pass_at_k(len(samples), passes, min(k, len(samples))) if samples else 0.0,
        tokens=total,
        tokens_per_success=(total.prompt + total.completion) / passes if passes else None,
        rejected=rejected,
        seconds=round(time.monotonic() - began, 3),
    )
