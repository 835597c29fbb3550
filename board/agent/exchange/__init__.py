"""One exchange of a role, as a pipeline of named stages over one frozen request.

A caller (a chat turn, a consultation, a meeting seat, a compaction summary) builds an
:class:`ExchangeRequest` once; :func:`run_exchange` answers it with the collaborators of an
:class:`ExchangeDeps`, keeping what changes in one :class:`ExchangeState` that never leaves
the run. Modules, in the order a run meets them:

- ``request``  what is asked (frozen): role, context, prompt, tool policy, model choice, purpose
- ``deps``     the collaborators (frozen), with a no-op for each optional one
- ``state``    what changes during the run, and ``Continue`` / ``DONE``
- ``prepare``  resolve_model -> lay_out_prompt -> select_tools -> attribute_prompt
- ``loop``     call_model <-> run_tools
- ``wrappers`` around each model call: budget_gate -> reserve_allowance -> trace_call -> record_to_ledger
               -> apply_deadline -> show_images
- ``finish``   guard_output -> fallback_text, then to_outcome
- ``outcome``  what comes back (frozen), and the fixed fallback replies
- ``run``      run_exchange: the order of the stages

:meth:`board.agent.runner.AgentRunner.exchange` keeps its keyword arguments as an adapter.
"""

from board.agent.exchange.deps import ExchangeDeps, ExchangePolicy
from board.agent.exchange.outcome import ExchangeOutcome, ToolEvent
from board.agent.exchange.request import EventHook, ExchangeRequest, ModelChoice, PromptInput, ToolPolicy
from board.agent.exchange.run import run_exchange
from board.agent.exchange.state import ExchangeState

__all__ = [
    "EventHook",
    "ExchangeDeps",
    "ExchangeOutcome",
    "ExchangePolicy",
    "ExchangeRequest",
    "ExchangeState",
    "ModelChoice",
    "PromptInput",
    "ToolEvent",
    "ToolPolicy",
    "run_exchange",
]
