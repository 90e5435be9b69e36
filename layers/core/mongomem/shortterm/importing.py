"""Importing past conversations: recorded with their original times, promoted along their original gaps.

An import records each session's turns in time order through the record path (same limits, same seqs),
cuts snapshots where the original conversation went quiet for longer than `snapshot.idle_seconds` (and
every `max_messages`, as the scan does), and sends the snapshots to extraction; the turns are queued for
recall like any recorded turn. Each turn carries an import key (a hash of session, role, name, time and
content): importing the same history again records nothing new.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from mongomem.config import MemoryConfig
from mongomem.errors import Conflict, InvalidInput, PayloadTooLarge
from mongomem.models.common import Scope, as_utc, utcnow
from mongomem.models.imports import (
    MAX_IMPORT_STRETCHES,
    MAX_IMPORT_TURNS,
    ImportReport,
    ImportRequest,
    ImportTurn,
)
from mongomem.models.sessions import StoredSnapshot
from mongomem.models.turns import RecordTurnsRequest
from mongomem.shortterm.ports import TurnRepository
from mongomem.shortterm.record import TurnRecorder

T = TypeVar("T")
# LoCoMo: the turns of a session are this far apart from the session's start (their order and day stay).
LOCOMO_TURN_SECONDS = 10


class HistoryPromoter(Protocol):
    """What an import needs from promotion (mongomem.shortterm.promotion.Promoter)."""

    def flush_history(self, scope: Scope, session_id: str) -> list[StoredSnapshot]: ...


def import_key(turn: ImportTurn) -> str:
    """The turn's identity across imports: the same session, speaker, time and words."""
    parts = [turn.session_id, turn.role, turn.name or "", turn.timestamp.isoformat(), turn.content]
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


# -- formats ------------------------------------------------------------------------------------------
def turns_of(request: ImportRequest) -> list[ImportTurn]:
    """The request's turns, whatever its format; InvalidInput names the line or field that is wrong."""
    if request.format == "turns":
        if request.turns is None or request.data is not None:
            raise InvalidInput(
                'format "turns" carries its turns in `turns` (and no `data`)', {"path": "turns"}
            )
        turns = request.turns
    elif request.format == "jsonl":
        if not isinstance(request.data, str) or request.turns is not None:
            raise InvalidInput('format "jsonl" carries its lines as a string in `data`', {"path": "data"})
        turns = parse_jsonl(request.data)
    else:
        if not isinstance(request.data, dict | list) or request.turns is not None:
            raise InvalidInput(
                'format "locomo" carries a LoCoMo sample (or a list) in `data`', {"path": "data"}
            )
        turns = parse_locomo(request.data)
    if not turns:
        raise InvalidInput(
            "the import holds no turns", {"path": "turns" if request.format == "turns" else "data"}
        )
    if len(turns) > MAX_IMPORT_TURNS:
        raise InvalidInput(
            f"one import request holds at most {MAX_IMPORT_TURNS} turns; got {len(turns)} "
            "(`mongomem import FILE` splits a file into requests)",
            {"max_turns": MAX_IMPORT_TURNS},
        )
    return turns


def parse_jsonl(text: str) -> list[ImportTurn]:
    """One turn per line: {"session_id", "role", "content", "timestamp", "name"?, "metadata"?}."""
    turns = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            turns.append(ImportTurn.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "line"
            raise InvalidInput(
                f"line {number}: {where}: {first['msg']}", {"path": "data", "line": number, "field": where}
            ) from None
    return turns


def parse_locomo(data: dict[str, Any] | list[Any]) -> list[ImportTurn]:
    """LoCoMo samples ({"conversation": {...}} or the conversation itself): speaker_a is the user."""
    samples = data if isinstance(data, list) else [data]
    turns: list[ImportTurn] = []
    for index, sample in enumerate(samples):
        if not isinstance(sample, dict):
            raise InvalidInput(f"data[{index}] is not a LoCoMo sample object", {"path": f"data.{index}"})
        conv = sample.get("conversation", sample)
        if not isinstance(conv, dict) or "speaker_a" not in conv:
            raise InvalidInput(
                f"data[{index}] is not a LoCoMo conversation (no speaker_a)", {"path": f"data.{index}"}
            )
        prefix = f"{sample['sample_id']}-" if len(samples) > 1 and sample.get("sample_id") else ""
        numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
        if not isinstance(conv["speaker_a"], str):
            raise InvalidInput(
                f"data[{index}].speaker_a must be a name (a string)", {"path": "data.speaker_a"}
            )
        for n in numbers:
            start = _locomo_time(conv.get(f"session_{n}_date_time"), f"data.session_{n}_date_time")
            said = conv[f"session_{n}"] or []
            if not isinstance(said, list) or not all(isinstance(t, dict) for t in said):
                raise InvalidInput(
                    f'session_{n} must be a list of turn objects ({{"speaker", "text", "dia_id"}})',
                    {"path": f"data.session_{n}"},
                )
            for i, t in enumerate(said):
                try:
                    when = start + timedelta(seconds=LOCOMO_TURN_SECONDS * i)
                except OverflowError:
                    raise InvalidInput(
                        f"session_{n}[{i}]: {LOCOMO_TURN_SECONDS} s a turn after "
                        f"session_{n}_date_time runs past the year 9999",
                        {"path": f"data.session_{n}.{i}"},
                    ) from None
                content = str(t.get("text") or "")
                if t.get("blip_caption"):
                    content += f" [shared a photo: {t['blip_caption']}]"
                turn = {
                    "session_id": f"{prefix}session_{n}",
                    "role": "user" if t.get("speaker") == conv["speaker_a"] else "assistant",
                    "name": t.get("speaker"),
                    "content": content,
                    "timestamp": when,
                    "metadata": {"dia_id": t["dia_id"]} if t.get("dia_id") else None,
                }
                try:
                    turns.append(ImportTurn.model_validate(turn))
                except ValidationError as exc:
                    first = exc.errors()[0]
                    raise InvalidInput(
                        f"session_{n}[{i}]: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}",
                        {"path": f"data.session_{n}.{i}"},
                    ) from None
    return turns


def _locomo_time(text: Any, path: str) -> datetime:
    """'1:56 pm on 8 May, 2023' (LoCoMo's session dates, taken as UTC)."""
    try:
        return datetime.strptime(str(text).strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        raise InvalidInput(
            f"{path} is not a LoCoMo date ('1:56 pm on 8 May, 2023'): {text!r}", {"path": path}
        ) from None


# -- import ---------------------------------------------------------------------------------------------
@dataclass
class _Stretch:
    """Turns of one session said without a pause longer than the idle timeout."""

    turns: list[ImportTurn]
    keys: list[str]


class Importer:
    def __init__(
        self, turns: TurnRepository, recorder: TurnRecorder, promoter: HistoryPromoter, memory: MemoryConfig
    ) -> None:
        self.turns = turns
        self.recorder = recorder
        self.promoter = promoter
        self.memory = memory

    def run(self, scope: Scope, request: ImportRequest) -> ImportReport:
        turns = turns_of(request)
        _check_sizes(turns, self.memory)  # before any write: an import is refused whole or recorded
        report = ImportReport(turns_received=len(turns))
        by_session: dict[str, list[ImportTurn]] = {}
        for turn in turns:
            by_session.setdefault(turn.session_id, []).append(turn)
        report.sessions = len(by_session)
        idle = timedelta(seconds=self.memory.snapshot.idle_seconds)
        now = utcnow()
        for said in by_session.values():
            said.sort(key=lambda t: t.timestamp)  # stable: equal times keep the file's order
        # refused before a single read when even the turns already imported could not fit
        _check_stretches(sum(len(_stretches([(t, "") for t in said], idle)) for said in by_session.values()))
        # Plan every session's batches first, each validated exactly as the record path will: a turn the
        # record path would refuse, or an older turn than the session already holds, refuses the whole
        # import before anything is written.
        plans: list[tuple[str, list[tuple[_Stretch, list[RecordTurnsRequest]]]]] = []
        for session_id, said in by_session.items():
            seen = self.turns.import_keys(scope, session_id)
            fresh = [(t, k) for t in said if (k := import_key(t)) not in seen]
            seen.update(k for _, k in fresh)
            report.already_imported += len(said) - len(fresh)
            if fresh:
                self._check_order(scope, session_id, fresh[0][0])
            planned = [(s, self._batches(session_id, s, turns)) for s in _stretches(fresh, idle)]
            plans.append((session_id, planned))
        _check_stretches(sum(len(planned) for _, planned in plans))
        for session_id, planned in plans:
            for stretch, batches in planned:
                for batch, keys in zip(
                    batches, _chunks(stretch.keys, self.memory.limits.max_batch), strict=True
                ):
                    self.recorder.record(scope, session_id, batch, import_keys=keys)
                report.turns_recorded += len(stretch.turns)
                if now - stretch.turns[-1].timestamp < idle:
                    # still going on in real time: the scan promotes it when it goes idle
                    report.turns_left_for_scan += len(stretch.turns)
                    continue
                snaps = self.promoter.flush_history(scope, session_id)
                report.snapshots += len(snaps)
                report.extraction_queued += sum(len(s.extraction) for s in snaps)
        return report

    def _check_order(self, scope: Scope, session_id: str, first: ImportTurn) -> None:
        """Turns get seqs after the session's own: an older turn than its latest would break time order."""
        latest = self.turns.latest(scope, session_id, 1)
        if latest and first.timestamp < as_utc(latest[-1].timestamp):
            raise Conflict(
                f"session {session_id!r} already holds turns up to {as_utc(latest[-1].timestamp).isoformat()}; "
                f"an import adds turns after them, but this one starts at {first.timestamp.isoformat()} "
                "(import older history into another session, or import the whole history before recording)",
                {
                    "path": "turns",
                    "session_id": session_id,
                    "session_latest": as_utc(latest[-1].timestamp).isoformat(),
                    "import_earliest": first.timestamp.isoformat(),
                },
            )

    def _batches(
        self, session_id: str, stretch: _Stretch, every: list[ImportTurn]
    ) -> list[RecordTurnsRequest]:
        """The stretch's record requests, validated now (InvalidInput names the turn the record path refuses)."""
        out = []
        for batch, keys in zip(
            _chunks(stretch.turns, self.memory.limits.max_batch),
            _chunks(stretch.keys, self.memory.limits.max_batch),
            strict=True,
        ):
            # a retried request (its answer lost) replays the batch: the token is the batch's own keys
            token = "import-" + hashlib.sha256("".join(keys).encode()).hexdigest()[:40]
            body = {
                "client_token": token,
                "turns": [t.model_dump(exclude={"session_id"}, exclude_none=True) for t in batch],
            }
            try:
                out.append(RecordTurnsRequest.model_validate(body))
            except ValidationError as exc:
                first = exc.errors(include_input=False, include_url=False)[0]
                where = [p for p in first["loc"]]
                turn = batch[int(where[1])] if len(where) > 1 and str(where[1]).isdigit() else batch[0]
                index = next(i for i, t in enumerate(every) if t is turn)
                field = ".".join(str(p) for p in where[2:]) or "turn"
                raise InvalidInput(
                    f"turn {index} (session {session_id}): {field}: {first['msg']}",
                    {"path": f"turns.{index}" + (f".{field}" if where[2:] else ""), "session_id": session_id},
                ) from None
        return out


def _check_stretches(count: int) -> None:
    """Before any write: one request cuts at most MAX_IMPORT_STRETCHES idle-separated stretches."""
    if count > MAX_IMPORT_STRETCHES:
        raise PayloadTooLarge(
            f"this import cuts {count} stretches of conversation separated by idle time (each one snapshot); "
            f"one request cuts at most {MAX_IMPORT_STRETCHES}: send fewer turns per request "
            "(`mongomem import FILE` splits a file so)",
            {"path": "turns", "stretches": count, "max_stretches": MAX_IMPORT_STRETCHES},
        )


def _check_sizes(turns: list[ImportTurn], memory: MemoryConfig) -> None:
    limit = memory.limits.max_content_bytes
    for index, turn in enumerate(turns):
        size = len(turn.content.encode("utf-8"))
        if size > limit:
            raise PayloadTooLarge(
                f"turn {index} (session {turn.session_id}) has {size} bytes of content; the limit is {limit}",
                {"path": f"turns.{index}.content", "max_content_bytes": limit},
            )


def _chunks(items: list[T], size: int) -> list[list[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _stretches(turns: list[tuple[ImportTurn, str]], idle: timedelta) -> list[_Stretch]:
    out: list[_Stretch] = []
    for turn, key in turns:
        if not out or turn.timestamp - out[-1].turns[-1].timestamp > idle:
            out.append(_Stretch([], []))
        out[-1].turns.append(turn)
        out[-1].keys.append(key)
    return out
