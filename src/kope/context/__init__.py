"""Fitting prompts into a token budget: below both the agents, which build prompts, and the memory,
whose experience packer offers its blocks as sections of the same budget.
`pack` chooses a level of detail for each `Section` so that the assembled prompt, counted by the
caller's tokenizer, never exceeds the budget, and records every choice in `Packed`.
"""

from kope.context.budget import BudgetError, Choice, Packed, Section, pack

__all__ = ["BudgetError", "Choice", "Packed", "Section", "pack"]
