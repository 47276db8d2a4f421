"""Which save a session plays and what it last saw of it (v1.md "Save switch", "Freshness").

Pure bookkeeping for :class:`~xtyserver.session.machine.GameAgentSession`: it
answers with the effects that open, close and park a save; the state machine
decides when.
"""

from __future__ import annotations

from xtyserver.memory.shown_names import ShownNames
from xtyserver.memory.types import Scope
from xtyserver.protocol.frames import Identity, ModelContext
from xtyserver.session.effects import CloseSave, Effect, Log, OpenSave, PlayBeat, ResumeWorking
from xtyserver.session.turns import Turns


class SaveTracker:
    """The save of one session and its latest game state (``turns`` park its working memory)."""

    def __init__(self, turns: Turns, *, summarize: bool, now: float) -> None:
        self._turns = turns
        self._summarize = summarize
        self.identity: Identity | None = None
        self.timezone = "UTC"
        self.last_beat = now
        self.context: ModelContext | None = None
        self.context_at = now
        self.day: int | None = None
        # The names the game showed for ids on this save (aliases; never stored).
        self.shown = ShownNames()

    @property
    def save(self) -> Scope:
        """The current save; only asked for after hello, which always sets an identity."""
        assert self.identity is not None
        return Scope(self.identity.game_id, self.identity.save_id)

    def open(self, identity: Identity, timezone: str, now: float) -> list[Effect]:
        """The first save of the session, from ``adapter.hello``."""
        self.identity, self.timezone, self.last_beat = identity, timezone, now
        save = self.save
        return [OpenSave(save, timezone, now, identity.save_name), ResumeWorking(save, now)]

    def beat(self, now: float) -> list[Effect]:
        """An accepted heartbeat: play time runs on to ``now``."""
        self.last_beat = now
        return [PlayBeat(self.save, self.timezone, now)]

    def is_switch(self, identity: Identity | None) -> bool:
        """Whether ``identity`` names another save (a saveName alone is only a display name)."""
        current = self.identity
        return identity is not None and (
            current is None
            or (identity.game_id, identity.save_id) != (current.game_id, current.save_id)
        )

    def switch(self, identity: Identity | None, now: float) -> list[Effect]:
        """A different identity on an open session is a save switch (v1.md "Save switch")."""
        if identity is None or not self.is_switch(identity):
            return []
        effects = self.end(now)
        self.identity = identity
        self.context, self.day = None, None
        self.shown.clear()
        new = self.save
        return [
            *effects,
            OpenSave(new, self.timezone, now, identity.save_name),
            ResumeWorking(new, now),
            Log("session.save_switch", {"game": new.game_id}),
        ]

    def end(self, now: float) -> list[Effect]:
        """The current save ends: its play session closes at the last heartbeat."""
        save = self.save
        return [
            CloseSave(save, self.last_beat),
            *self._turns.park(save, self.day, now, self._summarize),
        ]

    def set_context(self, context: ModelContext, now: float) -> list[Effect]:
        """The latest modelContext; a new in-game day may be news for working memory."""
        self.context = context
        # Without capturedAt a context counts as captured when it arrived (v1.md "Freshness").
        self.context_at = context.captured_at.timestamp() if context.captured_at else now
        if context.player is not None:
            self.shown.learn(context.player.held_item, context.player.held_item_name)
        if context.world is not None and context.world.day is not None:
            self.day = context.world.day
            return self._turns.saw_day(self.day)
        return []
