"""A model's own tensors outside its parameters and buffers, the same at every forward call.

A recurrent reference keeps its hidden state as a plain tensor attribute and replaces it in each forward
(`self.hidden = self.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))`). kope runs the reference and the candidate
a different number of times (a float64 copy of the reference made after its first trial; the candidate's probes,
ghost replay and timing runs), so state carried from call to call would compare an honest kernel with the reference
at another step of the recurrence. Both models get their plain tensor attributes back, as they were built, before
every call: each trial is the first step from the same state on both sides. What a forward writes into that state
is not judged (a candidate that forgets to keep its new hidden state passes here; the values it returns do not).
"""

from __future__ import annotations

from typing import Any

import torch


def same_state_each_call(model: torch.nn.Module) -> int:
    """Restore `model`'s plain tensor attributes (of every submodule) before each of its forward calls; the number of
    such tensors (0: nothing registered). The hook finds the submodules by path from the model it is called on, so
    a deep copy of the model (a float64 reference) restores its own."""
    saved = {
        (path, name): value.detach().clone()
        for path, module in model.named_modules()
        for name, value in vars(module).items()
        if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter)
    }
    if not saved:
        return 0

    installed: dict[tuple[int, str, str], tuple[torch.Tensor, int]] = {}
    """By (model, path, name): the copy last put back, and its version then (`Tensor._version` counts in-place
    writes): one neither replaced nor written since is left as it is (no copy on each call of a model that keeps a
    large tensor it never changes, which a timing run would count)."""

    def restore(called: torch.nn.Module, args: Any) -> None:
        for (path, name), value in saved.items():
            try:
                owner = called.get_submodule(path)
            except AttributeError:
                continue  # the model dropped the submodule: nothing to restore there
            if name in owner._parameters or name in owner._buffers:
                continue
            key = (id(called), path, name)
            current, last = vars(owner).get(name), installed.get(key)
            if last is not None and current is last[0] and current._version == last[1]:
                continue
            fresh = value.clone()
            vars(owner)[name] = fresh
            installed[key] = (fresh, fresh._version)

    model.register_forward_pre_hook(restore)
    return len(saved)
