"""``sabha chat``: the board in the terminal, typed at or piped into.

Typed at (stdin and stdout are terminals) it is a prompt_toolkit line editor: arrows,
Home/End, Ctrl-A/E/K/U/W, Alt-B/F, Ctrl-R to search the history, Tab to complete
``/commands`` and ``@roles``; the history is kept per board in ``<data_dir>/chat-history``.
Ctrl-C clears the line being typed, or cancels the answer being waited for; Ctrl-C on an
empty line, Ctrl-D, ``/quit`` or ``/exit`` leave with a goodbye (exit code 0). Log
warnings (a soul edit that breaks, a model that fails) print as one short line above the
prompt and the prompt is redrawn under them; the details go to ``<data_dir>/chat.log``
(:class:`bot.cli.console.ChatLog`). Meetings started from the chat print their
statements above the prompt as they come.

Why prompt_toolkit and not the standard library's ``readline``: ``input()`` blocks the
thread it runs in, so a line printed meanwhile (a log warning, a meeting statement)
lands in the middle of the prompt with no way to redraw it (Python's ``readline`` has no
``rl_forced_update_display``), and Ctrl-C cannot reach an ``input()`` waiting in a worker
thread (the "``^C^C`` and nothing until Enter" of old). prompt_toolkit reads keys on the
event loop, redraws the prompt under printed lines (``patch_stdout``), binds Ctrl-C
like a shell, and behaves the same with GNU readline, libedit or neither installed.

Piped (``echo hi | sabha chat``) each line is a message and each answer one line on
stdout; it ends at end of input, with no prompt, no history and no line editor loaded. A line
piped after ``/meeting`` waits for that meeting to end, so ``/ratify`` on the next line rules on
its decision.

One chat per board: a second ``sabha chat`` (typed at or piped) is refused with one line naming
the first (:mod:`bot.ops.runlock`). SIGINT from outside (``kill -INT``; Ctrl-C is a key here)
cancels the answer being waited for, or, at the prompt, leaves with ``Interrupted.`` and exit
code 130 (:mod:`bot.cli.interrupt`).

The chat adds three commands to the board's: ``/status`` (this board: config, roster,
models, souls and their problems, data dir, log), ``/attach PATH [message]`` (a file from this
computer, read by the board as a channel's file is: :mod:`bot.cli.attach`) and ``/quit``;
``/help`` lists them, after
how to talk to the board here (the terminal's own wording: ``--role``, no topics).

Typed at, the chat speaks as itself (:mod:`bot.cli.screen`): an advisor's answer is
``<emoji> <Name>: <text>``, the system's output (``/help``, ``/roles``, ``/status``, an unknown
command) has no advisor's label, and long lines wrap at word boundaries. Piped, every reply is
one ``<emoji> <Name>: <text>`` line, as scripts expect.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bot.cli.ask import console_envelope, resolve_role
from bot.cli.common import UserError, emit, note
from bot.cli.streaming import PipedStream, ScreenStream
from bot.cli.where import open_config, with_board

if TYPE_CHECKING:  # asyncio and the board are imported when the chat runs: `sabha --help` builds this parser
    import asyncio

    from board.app import Board, Parts
    from board.envelope import Envelope, Reply
    from board.llm.stream import StreamSink
    from board.media.attachment import Attachment
    from board.room.convene import BoardRoom
    from board.routing.router import Route
    from bot.config import LoadedConfig
    from bot.scheduled import ScheduledWorkService

__all__ = ["HISTORY_FILE", "QUIT_WORDS", "add_parsers", "cmd_chat", "status_lines"]

HISTORY_FILE = "chat-history"
QUIT_WORDS = ("/quit", "/exit")
PROMPT = "you> "
GOODBYE = "Goodbye."

T = TypeVar("T")


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


async def cmd_chat(args: argparse.Namespace) -> int:
    """Interactive chat on a terminal; with piped stdin, answer each line and exit at EOF."""
    loaded = open_config(args, writes=True)
    with _one_chat(loaded):
        if _interactive():
            return await _TerminalChat(loaded, args).run()
        return await with_board(loaded, lambda board: _piped(board, loaded, args))


def _one_chat(loaded: LoadedConfig) -> contextlib.AbstractContextManager[object]:
    """The board's chat lock (:mod:`bot.ops.runlock`), held: a second ``sabha chat`` on the board is
    refused with one line naming the first (two would interleave one conversation)."""
    from bot.ops.runlock import LockHeld, LockKind, ProcessLock, lock_unusable

    lock = ProcessLock(loaded.data_dir, LockKind.CHAT)
    try:
        lock.acquire()
    except LockHeld as held:
        raise UserError(f"another sabha chat is open on this board (pid {held.pid or '?'}, data dir "
                        f"{loaded.data_dir}): two would interleave one conversation. Leave that one first "
                        "(/quit), or ask one question with sabha ask") from None
    except OSError as exc:  # said in one line (not when the data dir cannot be written: opening the board says so)
        lock_unusable(lock.path, exc, "a second sabha chat on this board would not be refused")
        return contextlib.nullcontext()
    return lock


def _add_chat_commands(parts: Parts, loaded: LoadedConfig, role: str | None) -> None:
    from board.commands.about import CHAIR_ADDRESSING, Addressing
    from bot.cli.attach import ATTACH_HELP

    plain = (f"{role} answers (this chat was started with --role {role})" if role
             else "the chair (general) answers; sabha chat --role <role> starts a chat with another")
    parts.commands.describe_channel("console", Addressing((("<message>", plain), *CHAIR_ADDRESSING.rows[1:])))

    async def status(envelope: Envelope, route: Route) -> str:
        return "\n".join(status_lines(parts, loaded))

    async def leave(envelope: Envelope, route: Route) -> str:  # reached only where the chat does not stop first
        return "Type /quit in the terminal chat to leave it."

    parts.commands.register_command("status", status,
                                          "/status: this board: config, roster, models, souls, data, log",
                           owner_only=True)  # the terminal is always the owner
    async def attach(envelope: Envelope, route: Route) -> str:  # the chat takes /attach lines before the board
        return "Type /attach PATH in the terminal chat to send a file from this computer."

    parts.commands.register_command("attach", attach, ATTACH_HELP)
    parts.commands.register_command("quit", leave,
                                          "/quit: leave the chat (also /exit, Ctrl-D, Ctrl-C on an empty line)")


def status_lines(parts: Parts, loaded: LoadedConfig) -> list[str]:
    """What ``/status`` says in the terminal chat (the settings as the board was built: the chat never reloads)."""
    from board import __version__
    from bot.cli.console import LOG_FILE
    from bot.cli.keys import keyless_models

    settings = parts.settings
    profiles = parts.souls.profiles()
    models = sorted({parts.runner.model_for(p) for p in profiles} or {settings.agent.default_model})
    lines = [
        f"Sabha {__version__}, terminal chat",
        f"board: {loaded.source} (found by {loaded.found_by.value})",
        f"roster: {settings.roster.name}: {', '.join(p.role for p in profiles)}",
        f"model: {', '.join(models)}" + (f"; fallbacks: {', '.join(settings.agent.fallbacks)}"
                                         if settings.agent.fallbacks else ""),
    ]
    for model, key_env in keyless_models(loaded, [*models, *loaded.models()]):
        lines.append(f"  {model}: no API key (export {key_env} and start the chat again)")
    problems = [row for row in parts.souls.status() if row.error or row.source != "workspace"]
    lines.append(f"souls: {settings.workspace}" + ("" if problems else " (all loaded)"))
    for row in problems:
        using = "unusable" if row.version is None else f"using the {row.source} version {row.version}"
        lines.append(f"  {row.role}: {row.error or 'file missing'}; {using}")
    lines.append(f"data: {settings.data_dir} (transcripts, sabha.db, {HISTORY_FILE}, {LOG_FILE})")
    running = parts.room.running()
    lines.append(f"meetings running: {', '.join(running)}" if running else "meetings running: none")
    return lines


#: Said once when a turn runs past ``board.slow_notice_s`` (on stderr when piped, above the waiting line on a terminal).
WORKING = "the board is working on it…"


async def _piped(board: Board, loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """Answer each line of stdin; stop at end of input or /quit."""
    import asyncio

    role = resolve_role(board.parts, args.role)
    _add_chat_commands(board.parts, loaded, role)
    from bot.cli.attach import Attaching
    from bot.cli.screen import with_button_line

    attaching = Attaching(board.parts.media.settings.limit_for)
    stop = asyncio.Event()
    watcher = asyncio.create_task(board.watch(stop))
    try:
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                break
            line = line.strip()
            if not line:
                continue
            if line.lower() in QUIT_WORDS:
                break
            told, message = attaching.line(line)
            if told is not None:
                note(told)
            if message is None:
                continue
            if board.parts.room.running():  # a line piped after /meeting follows it: /ratify rules on its decision
                await board.parts.room.drain()
            stream = PipedStream()
            reply = await _answer(board, message, role, attaching.take(),
                                  slow_notice_s=loaded.config.board.slow_notice_s, stream=stream)
            stream.finish(with_button_line(reply.render(), reply.buttons) if reply is not None else None)
    finally:
        stop.set()
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
    return 0


async def _answer(board: Board, line: str, role: str | None, attachments: tuple[Attachment, ...] = (), *,
                  slow_notice_s: float = 0, stream: StreamSink | None = None) -> Reply | None:
    """The board's answer to ``line`` (with the files ``/attach`` kept for it); a turn past
    ``slow_notice_s`` (> 0) first says, once on stderr, that the board is working on it (unless the
    answer is streaming to ``stream`` by then)."""
    import asyncio
    import logging

    from board.llm.stream import streaming_to
    from bot.cli.attach import ask_with_files

    def working() -> None:
        if not (isinstance(stream, PipedStream) and stream.started):
            note(WORKING)

    notice = asyncio.get_running_loop().call_later(slow_notice_s, working) if slow_notice_s > 0 else None
    try:
        with streaming_to(stream):
            return await ask_with_files(board, console_envelope(line, role), attachments)
    except asyncio.CancelledError:
        raise
    except Exception:  # one failed message must not end the conversation
        logging.getLogger("sabha.cli").exception("answering %r failed", line[:80])
        note("that message could not be answered (the error is in the log); try again")
        return None
    finally:
        if notice is not None:
            notice.cancel()


async def _console_reminders(board: Board) -> tuple[ScheduledWorkService, list[str]]:
    """Scheduled work of the terminal's place (a meeting's reminders), printed between the lines, and the
    summary of what fell due while no chat was open (:mod:`board.decisions.waiting`), which stands for it."""
    from board.decisions.predictions.store import PredictionStore
    from board.decisions.waiting import waiting_lines
    from bot.cli.screen import reply_text, say
    from bot.scheduled import CONSOLE, ConsoleDeliver, ScheduledWorkService

    opened = board.parts.clock.now()
    waiting = await waiting_lines(board.parts.reminders, PredictionStore(board.parts.db), opened)
    deliver = ConsoleDeliver(lambda reply: say(reply_text(reply)), summarised_before=opened)
    service = ScheduledWorkService(board, [], deliver=deliver, only=(CONSOLE,))
    service.start()
    return service, waiting


class _TerminalChat:
    """The interactive chat; see the module docstring."""

    def __init__(self, loaded: LoadedConfig, args: argparse.Namespace) -> None:
        self.loaded = loaded
        self.args = args
        self.verbosity = getattr(args, "verbose", 0) or 0
        self._turn: asyncio.Task[Any] | None = None
        self._interrupted = False
        self._leave = False  # SIGINT at the prompt: leave with "Interrupted." and 130, not "Goodbye."
        self._session: Any = None  # the prompt, once it reads lines
        self._waiting: list[str] = []  # what fell due while no chat was open, said under the banner
        self._aside: set[asyncio.Future[None]] = set()  # consent answers typed while a turn waits for them

    def _on_sigint(self) -> None:
        """SIGINT (Ctrl-C while no prompt is reading keys, or ``kill -INT``): cancel what is being waited
        for; with nothing waited for, leave the chat as interrupted (:mod:`bot.cli.interrupt`)."""
        self._interrupted = True
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
            return
        self._leave = True
        app = self._session.app if self._session is not None else None
        if app is not None and app.is_running and app.future is not None and not app.future.done():
            app.exit(exception=EOFError)

    async def _cancellable(self, work: Awaitable[T], waiting: str, notice: tuple[float, str] | None = None,
                           stream: ScreenStream | None = None,
                           on_line: Callable[[str], None] | None = None) -> tuple[T | None, bool]:
        """Run ``work`` so that Ctrl-C cancels it, showing ``waiting`` meanwhile; (result, cancelled).

        The terminal stays in raw mode while it runs (a one-line prompt_toolkit application
        reads the keys), so Ctrl-C is a key and no SIGINT goes to the processes around the
        chat: under ``make run``, make would otherwise stop with "Interrupt" when the chat ends.
        """
        import asyncio

        self._interrupted = False
        turn = self._turn = asyncio.ensure_future(work)
        try:
            await _show_while(turn, waiting, self._on_key_interrupt, notice, stream, on_line)
            return await turn, False
        except asyncio.CancelledError:
            if not self._interrupted:
                raise  # the chat itself is being cancelled
            return None, True
        finally:
            self._turn = None

    def _while_waiting(self, board: Board, line: str, role: str | None) -> None:
        """A line typed while the board answers: an advisor waiting for the owner's consent takes ``/allow`` or
        ``/deny`` now (the turn that waits holds the prompt); anything else is said to be dropped."""
        import asyncio

        from board.tools.consent import answers_consent
        from bot.cli.screen import reply_text, say

        if not answers_consent(line):
            say(f"(while the board answers, only /allow or /deny is taken; {line.split()[0]} was not sent)")
            return

        async def answer() -> None:
            reply = await _answer(board, line, role)
            if reply is not None:
                say(reply_text(reply))

        task = asyncio.ensure_future(answer())
        self._aside.add(task)
        task.add_done_callback(self._aside.discard)

    def _on_key_interrupt(self) -> None:
        self._on_sigint()

    async def run(self) -> int:
        import asyncio
        import contextlib
        import signal

        from bot.app import open_board
        from bot.cli.console import ChatLog
        from bot.cli.keys import keyless_models, told_once
        from bot.cli.meeting_view import console_meeting_printer
        from bot.ops.signals import restore_handler

        data_dir = self.loaded.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        with ChatLog(data_dir, self.verbosity, base=self.loaded.base_dir) as chat_log:
            board = await open_board(self.loaded, report_missing_keys=False)
            # The banner says each missing key once; the answers' log lines do not repeat it on screen.
            told = [env for _, env in keyless_models(self.loaded, self.loaded.models())]
            quiet = told_once(told, [chat_log.screen] if chat_log.screen is not None else [])
            stop = asyncio.Event()
            watcher = asyncio.create_task(board.watch(stop), name="soul and knowledge watcher")
            previous = signal.getsignal(signal.SIGINT)  # sabha's quiet Ctrl-C (bot.cli.interrupt): put back after
            with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers off the main thread
                loop.add_signal_handler(signal.SIGINT, self._on_sigint)
            try:
                role = resolve_role(board.parts, self.args.role)
                _add_chat_commands(board.parts, self.loaded, role)
                board.parts.room.subscribe(console_meeting_printer())
                # reminders of meetings held here, printed when due; what fell due meanwhile, summarised
                reminders, self._waiting = await _console_reminders(board)
                with quiet:
                    try:
                        return await self._converse(board, role, chat_log.path)
                    finally:
                        await reminders.stop()
            finally:
                stop.set()
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(signal.SIGINT)
                    restore_handler(signal.SIGINT, previous)
                await board.close()

    def _banner(self, parts: Parts, log_path: Path) -> list[str]:
        from board import __version__
        from bot.cli.keys import key_advice, keyless_models

        profiles = parts.souls.profiles()
        names = ", ".join(f"{p.emoji} {p.name}" for p in profiles)
        lines = [
            f"Sabha {__version__}: the board is listening ({names}).",
            f"Board {self.loaded.source}; souls in {parts.settings.workspace}; log {log_path}.",
            "Type a message, or @role to ask one member; /attach PATH sends a file; /help lists the commands. "
            "Ctrl-C clears the line, Ctrl-D or /quit leaves.",
        ]
        lines += [f"⚠ {key_advice(self.loaded, model, env)}"
                  for model, env in keyless_models(self.loaded, self.loaded.models())]
        return lines

    async def _converse(self, board: Board, role: str | None, log_path: Path) -> int:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.patch_stdout import patch_stdout

        from bot.cli.screen import reply_text, say

        session: PromptSession[str] = PromptSession(
            history=FileHistory(str(self.loaded.data_dir / HISTORY_FILE)),
            key_bindings=_key_bindings(),
            completer=_completer(board.parts),
            complete_while_typing=False,
        )
        self._session = session
        for line in [*self._banner(board.parts, log_path), *self._waiting]:
            say(line)
        from bot.cli.attach import Attaching

        attaching = Attaching(board.parts.media.settings.limit_for)
        with patch_stdout(raw=True):
            while not self._leave:
                try:
                    text = await session.prompt_async(PROMPT, handle_sigint=False)
                except KeyboardInterrupt:  # Ctrl-C with text typed: that line is dropped
                    continue
                except EOFError:  # Ctrl-D, or Ctrl-C on an empty line
                    break
                text = text.strip()
                if not text:
                    continue
                if text.lower() in QUIT_WORDS:
                    break
                told, message = attaching.line(text)
                if told is not None:
                    say(told)
                if message is None:
                    continue
                slow = self.loaded.config.board.slow_notice_s
                stream = ScreenStream()
                reply, cancelled = await self._cancellable(_answer(board, message, role, attaching.take(),
                                                                   stream=stream),
                                                           "… the board is thinking (Ctrl-C cancels)",
                                                           (slow, WORKING) if slow > 0 else None, stream,
                                                           lambda line: self._while_waiting(board, line, role))
                if cancelled:
                    say("(cancelled: nothing was answered; ask again or go on)")
                elif reply is not None:
                    say(reply_text(reply))
            if self._leave:
                from bot.cli.interrupt import EXIT_INTERRUPTED, say_interrupted

                say_interrupted()
                return EXIT_INTERRUPTED
            await self._finish_meetings(board.parts.room)
            emit(GOODBYE)
        return 0

    async def _finish_meetings(self, room: BoardRoom) -> None:
        """Let a meeting started from this chat finish (its minutes print), unless Ctrl-C."""
        if not room.running():
            return
        emit("A board meeting is still running: waiting for its minutes.")
        _, cancelled = await self._cancellable(room.drain(), "… waiting for the meeting (Ctrl-C stops it)")
        if cancelled:
            await room.drain(timeout=0)
            emit("The meeting was stopped (recorded as cancelled).")


async def _show_while(task: asyncio.Future[Any], text: str, on_ctrl_c: Callable[[], None],
                      notice: tuple[float, str] | None = None, stream: ScreenStream | None = None,
                      on_line: Callable[[str], None] | None = None) -> None:
    """Show ``text`` on one line (erased afterwards) until ``task`` is done; Ctrl-C calls ``on_ctrl_c``.
    Keys typed meanwhile are not kept, except with ``on_line``: a line typed meanwhile that starts with
    ``/`` (shown after the waiting text) is handed to it at Enter (the owner's ``/allow`` or ``/deny`` for an
    advisor that waits for them; anything else is dropped there). ``notice`` (seconds, line): still waiting
    after that long, the line is printed once above the waiting line, where it stays (not once the answer
    streams). ``stream``: the answer so far replaces ``text`` while it is written."""
    import asyncio

    from prompt_toolkit.application import Application, run_in_terminal
    from prompt_toolkit.application.current import set_app
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window

    from bot.cli.screen import say

    if task.done():
        return
    bindings = KeyBindings()

    @bindings.add("c-c")
    def _ctrl_c(event: Any) -> None:
        on_ctrl_c()

    typed: list[str] = []  # a /command typed while waiting (only with on_line)

    @bindings.add("<any>")
    def _other(event: Any) -> None:
        """Type-ahead is dropped rather than echoed into the waiting line (a /command is kept for ``on_line``)."""
        if on_line is not None and (typed or event.data == "/") and event.data.isprintable():
            typed.append(event.data)
            app.invalidate()

    @bindings.add("backspace")
    def _back(event: Any) -> None:
        if typed:
            typed.pop()
            app.invalidate()

    @bindings.add("enter")
    def _enter(event: Any) -> None:
        line = "".join(typed).strip()
        typed.clear()
        app.invalidate()
        if on_line is not None and line:
            on_line(line)

    def waiting_text() -> str:
        base = text if stream is None else stream.view(text)
        return f"{base}  > {''.join(typed)}" if typed else base

    shown = FormattedTextControl(waiting_text)
    app: Application[None] = Application(
        layout=Layout(Window(shown, height=1 if stream is None else None, wrap_lines=True, style="class:waiting")),
        key_bindings=bindings, erase_when_done=True)
    if stream is not None:
        stream.redraw = app.invalidate

    def done(_: object) -> None:
        if app.is_running and app.future is not None and not app.future.done():
            app.exit()

    task.add_done_callback(done)
    told: list[asyncio.Future[None]] = []

    def tell(line: str) -> None:
        if stream is not None and stream.started:
            return  # the answer is showing: it says more than "working on it"
        if app.is_running and not task.done():
            with set_app(app):
                told.append(asyncio.ensure_future(run_in_terminal(lambda: say(line))))

    timer = asyncio.get_running_loop().call_later(notice[0], tell, notice[1]) if notice is not None else None
    try:
        await app.run_async(handle_sigint=False, pre_run=lambda: done(None) if task.done() else None)
    finally:
        if timer is not None:
            timer.cancel()
        if told:
            await asyncio.gather(*told, return_exceptions=True)


def _key_bindings() -> Any:
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("c-c")
    def _ctrl_c(event: Any) -> None:
        """Clear the line like a shell; on an empty line, leave."""
        if event.app.current_buffer.text:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")
        else:
            event.app.exit(exception=EOFError, style="class:exiting")

    return bindings


def _completer(parts: Parts) -> Any:
    """Tab completes ``/commands`` at the start of a line and ``@roles`` anywhere."""
    from prompt_toolkit.completion import Completer, Completion

    class BoardCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Any:
            word = document.get_word_before_cursor(WORD=True)
            if word.startswith("/") and document.text_before_cursor.lstrip() == word:
                options = [f"/{name}" for name in sorted({*parts.commands, "ask", "attach", "meeting", "exit"})]
            elif word.startswith("@"):
                options = [f"@{role}" for role in parts.souls.roles()]
            else:
                return
            for option in options:
                if option.startswith(word.lower()):
                    yield Completion(option, start_position=-len(word))

    return BoardCompleter()


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha chat``."""
    p = sub.add_parser(
        "chat", parents=[common], help="talk to the board in the terminal",
        description="Talk to the board. @role (or /ask role) asks one member; /help lists the commands, /status "
                    "shows this board. In a terminal: line editing and history (arrows, Ctrl-R), Tab completes "
                    "/commands and @roles, Ctrl-C clears the line or cancels an answer, Ctrl-D or /quit leaves. "
                    "/attach PATH sends a file (a document, a picture, a voice note) with your next message; "
                    "/attach PATH <message> sends it with that message at once. "
                    "With piped input, answers each line and exits at the end of the input.")
    p.add_argument("--role", help="the role that answers plain messages, by slug or name (default: general)")
    p.set_defaults(handler=cmd_chat)

