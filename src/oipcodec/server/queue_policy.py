"""Overload: how many requests may wait for a model, how long, and in what order they leave.

Triton's queue policy for a model that batches (``dynamic_batching``'s
``default_queue_policy``, ``priority_levels``, ``default_priority_level`` and
``priority_queue_policy``: :class:`QueuePolicy`, :func:`schedule`), steered per request by
the ``priority`` and ``timeout`` parameters of Triton's schedule policy extension; and
:class:`Overload`, the server's answer to a full queue and its bound on the requests in
flight for a model that does not batch. docs/serving.md#overload says what happens at each
limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oipcodec.errors import InvalidArgumentError, OverloadedError
from oipcodec.types import Parameters

if TYPE_CHECKING:
    from oipcodec.server.model import Model
    from oipcodec.server.model_config import DynamicBatching

__all__ = [
    "QUEUE_FULL",
    "SCHEDULE_PARAMETERS",
    "TIMEOUT_ACTIONS",
    "TIMED_OUT",
    "TRITON_OVERLOAD",
    "UNLIMITED",
    "DYNAMIC_BATCHING_FIELDS",
    "Overload",
    "QueuePolicy",
    "batching_settings",
    "schedule",
]

#: What a queue does with a request whose time in it ran out: answer it (REJECT), or move
#: it behind the requests of its priority level that still have time (DELAY).
TIMEOUT_ACTIONS = ("REJECT", "DELAY")
#: Triton's messages (clients match them): a full queue, and a request's time in the queue
#: over. Both are UNAVAILABLE (503) in Triton.
QUEUE_FULL = "Exceeds maximum queue size"
TIMED_OUT = "Request timeout expired"
#: The request parameters of Triton's schedule policy extension (int64 each): they steer the
#: queue and are not passed to ``predict``, nor do they keep requests out of one batch.
SCHEDULE_PARAMETERS = frozenset({"priority", "timeout"})


def _natural(value: Any, what: str) -> int:
    """``value``, an int >= 0; else ``ValueError`` naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} is an int >= 0, got {value!r}")
    return value


def _count(value: Any, what: str) -> int:
    """An unsigned number of Triton's JSON configuration: an int, or a string of digits
    (protobuf's JSON writes 64-bit integers as strings); else ``ValueError`` naming ``what``."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    return _natural(value, what)


@dataclass(frozen=True, slots=True)
class QueuePolicy:
    """The policy of one priority level's queue (Triton's ``ModelQueuePolicy``).

    Parameters
    ----------
    max_queue_size
        The most requests the level's queue holds (0: no limit); one more is refused at once
        with Triton's "Exceeds maximum queue size" (503, gRPC UNAVAILABLE).
    default_timeout_microseconds
        How long a request may wait in the queue (0: no limit).
    timeout_action
        ``"REJECT"``: a request whose time ran out is answered "Request timeout expired"
        (503, UNAVAILABLE) without running the model; ``"DELAY"``: it goes behind the
        requests of its level that still have time.
    allow_timeout_override
        A request's ``timeout`` parameter (microseconds, not 0) replaces the default.
    """

    max_queue_size: int = 0
    default_timeout_microseconds: int = 0
    timeout_action: str = "REJECT"
    allow_timeout_override: bool = False

    def __post_init__(self) -> None:
        _natural(self.max_queue_size, "max_queue_size")
        _natural(self.default_timeout_microseconds, "default_timeout_microseconds")
        if self.timeout_action not in TIMEOUT_ACTIONS:
            raise ValueError(
                f"timeout_action is one of {list(TIMEOUT_ACTIONS)}, got {self.timeout_action!r}"
            )
        if not isinstance(self.allow_timeout_override, bool):
            raise ValueError(
                f"allow_timeout_override is a bool, got {self.allow_timeout_override!r}"
            )

    @classmethod
    def of(cls, entry: Any, what: str) -> QueuePolicy:
        """A policy from Triton's JSON form (numbers, or strings of digits), else
        ``ValueError`` naming ``what`` (the entry's place) and the field."""
        if not isinstance(entry, Mapping):
            raise ValueError(f"{what} must be an object, got {entry!r}")
        unknown = sorted(set(entry) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"{what} has no field {unknown[0]!r}")
        try:
            size, timeout = (
                _count(entry.get(name, 0), name)
                for name in ("max_queue_size", "default_timeout_microseconds")
            )
            action = entry.get("timeout_action", "REJECT")
            return cls(size, timeout, action, entry.get("allow_timeout_override", False))
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from None

    def config(self) -> dict[str, Any]:
        """This policy as in Triton's JSON configuration."""
        return {
            "timeout_action": self.timeout_action,
            "default_timeout_microseconds": self.default_timeout_microseconds,
            "allow_timeout_override": self.allow_timeout_override,
            "max_queue_size": self.max_queue_size,
        }


#: The policy of a queue without limits (Triton's defaults).
UNLIMITED = QueuePolicy()


def check_levels(
    levels: int, default: int, policies: Mapping[int, QueuePolicy], policy: QueuePolicy
) -> None:
    """Triton's rules for priority levels: with levels, the default level is one of them
    (1 to ``levels``) and each per-level policy names one; without, neither is set."""
    _natural(levels, "priority_levels")
    _natural(default, "default_priority_level")
    if not isinstance(policy, QueuePolicy):
        raise ValueError(f"default_queue_policy is a QueuePolicy, got {policy!r}")
    if levels == 0 and (default or policies):
        raise ValueError(
            "default_priority_level and priority_queue_policy need priority_levels > 0"
        )
    if levels and not 1 <= default <= levels:
        raise ValueError(
            f"default_priority_level is one of the levels 1 to {levels} (priority_levels), "
            f"got {default}"
        )
    for level, entry in policies.items():
        if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= levels:
            raise ValueError(
                f"priority_queue_policy names level {level!r}; the levels are 1 to {levels}"
            )
        if not isinstance(entry, QueuePolicy):
            raise ValueError(f"priority_queue_policy[{level}] is a QueuePolicy, got {entry!r}")


#: The fields of Triton's ``ModelDynamicBatching``, every one read (``preserve_ordering`` holds
#: as it is, since a model's batches run one at a time and answer in order).
DYNAMIC_BATCHING_FIELDS = frozenset(
    {
        "max_queue_delay_microseconds",
        "preferred_batch_size",
        "preserve_ordering",
        "priority_levels",
        "default_priority_level",
        "default_queue_policy",
        "priority_queue_policy",
    }
)


def batching_settings(entry: Any) -> dict[str, Any]:
    """A ``dynamic_batching`` entry in Triton's JSON form (numbers, or strings of digits as
    protobuf's JSON writes 64-bit integers) as keywords of
    :class:`~oipcodec.server.model_config.DynamicBatching`; ``ValueError`` names what is
    wrong."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"dynamic_batching must be an object, got {entry!r}")
    unknown = sorted(set(entry) - DYNAMIC_BATCHING_FIELDS)
    if unknown:
        raise ValueError(
            f"dynamic_batching sets {unknown}, which Triton's dynamic_batching does not have"
        )
    settings: dict[str, Any] = {}
    for name in ("max_queue_delay_microseconds", "priority_levels", "default_priority_level"):
        if name in entry:
            settings[name] = _count(entry[name], name)
    sizes = entry.get("preferred_batch_size", [])
    if not isinstance(sizes, list):
        raise ValueError(f"preferred_batch_size must be a list, got {sizes!r}")
    settings["preferred_batch_size"] = [_count(n, "a preferred_batch_size") for n in sizes]
    if "default_queue_policy" in entry:
        settings["default_queue_policy"] = QueuePolicy.of(
            entry["default_queue_policy"], "default_queue_policy"
        )
    policies = entry.get("priority_queue_policy", {})
    if not isinstance(policies, Mapping):
        raise ValueError(f"priority_queue_policy must be an object, got {policies!r}")
    settings["priority_queue_policy"] = {
        _count(level, "a priority_queue_policy level"): QueuePolicy.of(
            value, f"priority_queue_policy[{level}]"
        )
        for level, value in policies.items()
    }
    return settings


def schedule(
    batching: DynamicBatching, name: str, parameters: Parameters
) -> tuple[int, QueuePolicy, int, Parameters]:
    """Where a request to model ``name`` queues: its priority level (Triton's rule: its
    ``priority`` parameter when it is one of the levels, else the default level; 0 without
    levels), that level's policy, its timeout in microseconds (0: none), and its parameters
    without the schedule ones. A ``priority`` or ``timeout`` that is not an int >= 0 is an
    :class:`InvalidArgumentError` naming it."""
    given: dict[str, int] = {}
    if not SCHEDULE_PARAMETERS.isdisjoint(parameters):
        for key in sorted(SCHEDULE_PARAMETERS.intersection(parameters)):
            value = parameters[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgumentError(
                    f"parameter '{key}' of a request to model '{name}' is an int >= 0, "
                    f"got {value!r}"
                )
            given[key] = value
        parameters = {k: v for k, v in parameters.items() if k not in SCHEDULE_PARAMETERS}
    level = 0
    if batching.priority_levels:
        level = given.get("priority", 0)
        if not 1 <= level <= batching.priority_levels:
            level = batching.default_priority_level
    policy = batching.priority_queue_policy.get(level, batching.default_queue_policy)
    timeout = policy.default_timeout_microseconds
    if policy.allow_timeout_override and given.get("timeout"):
        timeout = given["timeout"]
    return level, policy, timeout, parameters


@dataclass(frozen=True, slots=True)
class Overload:
    """The server's settings for overload (``ServerConfig``'s of the same names).

    Parameters
    ----------
    max_queued_requests
        The most requests a model that does not batch holds at once, running or waiting to
        run (its ``max_queued_requests`` attribute, when set, instead); 0: no limit.
    retry_after
        None: a refusal is 503 (Triton's answer); seconds: 429 Too Many Requests with
        ``Retry-After`` (:class:`~oipcodec.errors.OverloadedError`).
    """

    max_queued_requests: int = 0
    retry_after: int | None = None

    def __post_init__(self) -> None:
        _natural(self.max_queued_requests, "max_queued_requests")
        if self.retry_after is not None:
            _natural(self.retry_after, "overload_retry_after")

    def refusal(self, message: str) -> OverloadedError:
        """The error a refused request answers with."""
        return OverloadedError(message, self.retry_after)

    def admit(self, model: Model, in_flight: int) -> None:
        """Refuse a request to a model that does not batch when it holds its limit of
        requests already (``in_flight``); a model that batches has its queue policy."""
        limit = model.max_queued_requests
        if limit is None:
            limit = self.max_queued_requests
        if limit and in_flight >= limit and model.dynamic_batching is None:
            raise self.refusal(
                f"{QUEUE_FULL}: model '{model.name}' holds {in_flight} requests, its "
                f"limit (max_queued_requests {limit})"
            )


#: Triton's answers: no limit on a model that does not batch, refusals as 503.
TRITON_OVERLOAD = Overload()
