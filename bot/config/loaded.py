"""A config as the board reads it: :class:`LoadedConfig`, where it came from and its settings.

Apart from :mod:`bot.config.load` (which validates the file whole) so that the wiring (:mod:`bot.app`, the
CLI's key checks) imports no pydantic: ``sabha ask`` on a config that
:mod:`bot.config.plain` can vouch for never loads the config models. ``config`` is a
validated :class:`bot.config.sections.Config`, or that reading's plain equivalent
(:class:`bot.config.plain.PlainConfig`: the same attributes, the defaults for whatever the
file does not set).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.config.file import FoundBy

if TYPE_CHECKING:  # the board's settings types are imported when they are built: `sabha souls` needs none
    from board.agent.runner import AgentSettings
    from board.app import BoardSettings
    from board.roles import RosterSpec
    from board.spending.budget import BudgetSettings
    from board.storage.url import StateURL
    from bot.config.sections import Config

__all__ = ["LoadedConfig"]


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config, where it came from, and its folder for relative paths."""

    config: Config
    source: Path | None
    base_dir: Path
    found_by: FoundBy = FoundBy.NONE
    warnings: tuple[str, ...] = ()  # e.g. a secret written into the file
    skipped: tuple[str, ...] = ()  # channel sections left out (loaded with channels=False)

    @property
    def workspace(self) -> Path:
        """The workspace folder, absolute."""
        return (self.base_dir / self.config.workspace).resolve()

    @property
    def data_dir(self) -> Path:
        """The data folder (transcripts, state db), absolute."""
        return (self.base_dir / self.config.data_dir).resolve()

    def state_url(self) -> StateURL:
        """Where the state lives (``state.url``; the password from the environment); relative SQLite paths are
        taken from the data dir."""
        from board.storage.url import parse_state_url

        return parse_state_url(self.config.state.url, data_dir=self.data_dir)

    def models(self) -> list[str]:
        """Every model the config names, once each: the default, the fallbacks, the cheap
        model, the per-role ones (``board.agents``), the speech models (``media``)."""
        llm = self.config.llm
        models = [llm.model, *llm.fallbacks, *([llm.cheap_model] if llm.cheap_model else [])]
        models += [a.model for a in self.config.board.agents.values() if a.model]
        media = self.config.media.settings()
        models += [m for m in (media.transcribe_model, *media.transcribe_fallbacks, media.speech_model) if m]
        return list(dict.fromkeys(models))

    def roster(self) -> RosterSpec:
        """The roster in use with its per-role overrides (without building the rest of the board's settings)."""
        from board.roles import RoleOverride, RosterSpec

        board = self.config.board
        overrides = {
            role: RoleOverride(name=o.name, emoji=o.emoji, model=o.model, soul_file=o.soul_file,
                               tools=tuple(o.tools) if o.tools is not None else None, temperature=o.temperature,
                               thinking=o.thinking)
            for role, o in board.agents.items()
        }
        return RosterSpec.build(board.roster, custom=board.rosters, overrides=overrides, single=not board.enabled)

    def board_settings(self) -> BoardSettings:
        """The plain values the board needs."""
        from board.app import BoardSettings
        from board.room.consult import ConsultSettings
        from board.room.settings import DEFAULT_CHALLENGERS, MeetingSettings
        from board.schedule.standing import StandingSettings

        board = self.config.board
        roster = self.roster()
        meetings, consult = board.meetings, board.consultation
        return BoardSettings(
            workspace=self.workspace,
            data_dir=self.data_dir,
            state=self.state_url(),
            state_pool_size=self.config.state.pool_size,
            roster=roster,
            agent=self.agent_settings(),
            meetings=MeetingSettings(
                enabled=meetings.enabled and board.enabled,
                max_turns_per_agent=meetings.max_turns_per_agent,
                max_duration_s=meetings.max_duration_s,
                budget_usd=meetings.budget_usd,
                parallel=meetings.parallel,
                agent_timeout_s=meetings.agent_timeout_s,
                quorum=meetings.quorum,
                critic_role=meetings.critic_role,
                challengers=tuple({**dict(DEFAULT_CHALLENGERS), **meetings.challengers}.items()),
                peer_review=meetings.peer_review,
                min_resolved_predictions=meetings.min_resolved_predictions,
                recall_decisions=meetings.recall_decisions,
                review_after_days=meetings.review_after_days,
                max_tool_calls=meetings.max_tool_calls,
                participants=tuple(meetings.participants),
                max_extra_rounds=meetings.max_extra_rounds,
                confirm_over_usd=meetings.confirm_over_usd,
                resume_within_s=meetings.resume_within_s,
            ),
            consultation=ConsultSettings(
                enabled=consult.enabled and board.enabled,
                max_depth=consult.max_depth,
                timeout_s=consult.timeout_s,
                allow={role: tuple(targets) for role, targets in consult.allow.items()},
            ),
            custom_rosters=tuple((name, tuple(roles)) for name, roles in board.rosters.items()),
            max_message_chars=board.max_message_chars,
            timezone=board.timezone,
            standing=StandingSettings(catch_up_s=self.config.schedule.catch_up_s),
            budget=self.budget_settings(),
            knowledge=self.config.knowledge.settings(),
            web_search=self.config.web_search.settings(),
            memory=self.config.memory.settings(),
            recall_embedding=self.config.memory.embedding_settings(),
            guardrails=self.config.guardrails.settings(),
            media=self.config.media.settings(),
            people=self.config.people.settings(),
            consent=replace(self.config.tools.consent(), owner_chats=self.config.owner_chats()),
            mcp=self.config.mcp.settings(),
        )

    def budget_settings(self) -> BudgetSettings:
        """``budget:`` as the board's plain settings."""
        from board.spending.budget import BudgetSettings

        return BudgetSettings(daily_usd=self.config.budget.daily_usd,
                              per_sender_daily_usd=self.config.budget.per_sender_daily_usd)

    def agent_settings(self) -> AgentSettings:
        """The ``llm`` section (and history/tool defaults) as the board's plain settings."""
        from board.agent.compaction import ContextSettings
        from board.agent.runner import AgentSettings
        from board.llm.pricing import ModelPrice, PriceTable
        from board.llm.resilience import RetryPolicy

        llm = self.config.llm
        prices = {
            model: ModelPrice(
                input=p.input,
                output=p.output,
                cache_read=p.input if p.cache_read is None else p.cache_read,
                cache_write=p.input if p.cache_write is None else p.cache_write,
            )
            for model, p in llm.prices.items()
        }
        context = llm.context
        return AgentSettings(
            default_model=llm.model,
            history_messages=self.config.board.history_messages,
            max_tokens=llm.max_tokens,
            fallbacks=tuple(llm.fallbacks),
            cheap_model=llm.cheap_model,
            thinking=llm.thinking,
            keep_thinking=llm.keep_thinking,
            max_tool_iterations=llm.max_tool_iterations,
            default_tools=tuple(self.config.tools.default) if self.config.tools.default is not None else None,
            text_tool_models=tuple(llm.text_tool_protocol),
            retry=RetryPolicy(
                timeout_s=llm.timeout_s,
                retries=llm.retry.retries,
                backoff_s=llm.retry.backoff_s,
                backoff_max_s=llm.retry.backoff_max_s,
                retry_after_max_s=llm.retry.retry_after_max_s,
            ),
            turn_timeout_s=llm.turn_timeout_s,
            prices=PriceTable.with_overrides(prices),
            context=ContextSettings(
                history_tokens=context.history_tokens,
                keep_recent_messages=context.keep_recent_messages,
                summary_max_tokens=context.summary_max_tokens,
                compaction=context.compaction,
                roles=dict(context.roles),
            ),
        )
