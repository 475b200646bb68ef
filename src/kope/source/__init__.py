"""The one source-analysis layer: a candidate parsed once, its Triton kernels by one rule, one call-name helper, one
names-in helper."""

from kope.source.parse import LaunchSite, ParsedSource, call_name, dotted, names_in

__all__ = ["LaunchSite", "ParsedSource", "call_name", "dotted", "names_in"]
