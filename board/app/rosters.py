"""The board's soul stores by roster: :class:`Rosters` (the configured one, others opened for meetings on
demand), and every model they may call (:meth:`Rosters.configured_models`)."""

from __future__ import annotations

from collections.abc import Callable

from board.agent.runner import AgentSettings
from board.app.settings import BoardSettings
from board.roles import RosterSpec
from board.workspace.souls import LAST_GOOD_DIR, SoulStore

__all__ = ["Rosters"]


class Rosters:
    """Roster name -> its :class:`SoulStore`; ``agent`` is read at each call (a reload may change the models)."""

    def __init__(self, settings: BoardSettings, souls: SoulStore, agent: Callable[[], AgentSettings]) -> None:
        self.settings = settings
        self.agent = agent
        self._stores: dict[str, SoulStore] = {settings.roster.name: souls}

    def souls_for(self, roster: str) -> SoulStore:
        """The soul store of ``roster`` (the configured one, or another on demand for meetings)."""
        store = self._stores.get(roster)
        if store is None:
            settings = self.settings
            spec = RosterSpec.build(
                roster,
                custom={name: list(roles) for name, roles in settings.custom_rosters},
                overrides=dict(settings.roster.overrides),
            )
            store = self._stores[roster] = SoulStore(settings.workspace, spec,
                                                     keep_dir=settings.data_dir / LAST_GOOD_DIR)
        return store

    def configured_models(self) -> list[str]:
        """Every model the board may call now: the default, the fallbacks, the cheap model, each
        soul's own (the guardrails scrub all their names from answers)."""
        agent = self.agent()
        models = [agent.default_model, *agent.fallbacks, *([agent.cheap_model] if agent.cheap_model else [])]
        for store in list(self._stores.values()):
            models += [profile.model for profile in store.profiles() if profile.model]
        return models
