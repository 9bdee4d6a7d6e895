"""Kubernetes resource quantities ("10Gi", "500M", "1.5Ti"), byte counts for people, and
kubectl-style durations ("90s", "2h30m").

Sizes a user types must carry a unit: kubestr silently reads ``-z 45`` as 45 bytes, and we refuse it
instead. The grammar follows the Kubernetes quantity format (binary Ki..Ei, decimal k..E, and
exponents); the unit tests cross-check it against the official client's parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
}
_QUANTITY = re.compile(
    r"^([+-]?(?:\d+\.?\d*|\.\d+))((?:[eE][+-]?\d+)|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$"
)


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity, or lacks the unit we insist on."""


def parse_quantity(text: str) -> Decimal:
    """Parse a Kubernetes quantity into its exact value.

    Raises:
        QuantityError: when ``text`` is not a valid quantity.
    """
    match = _QUANTITY.match(text.strip())
    if not match:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity (examples: 10Gi, 500Mi, 1Ti)")
    number, suffix = match.group(1), match.group(2) or ""
    try:
        value = Decimal(number)
    except InvalidOperation as exc:  # the regex should make this unreachable
        raise QuantityError(f"{text!r} is not a number") from exc
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        return value * (Decimal(10) ** int(suffix[1:]))
    return value * _DECIMAL[suffix]


def parse_size_bytes(text: str, *, what: str = "size") -> int:
    """Parse a storage size that must carry a unit ("10Gi", "500M") into whole bytes.

    A bare number is refused: ``-z 45`` almost certainly does not mean 45 bytes.

    Raises:
        QuantityError: when the text is not a quantity, has no unit, or is not positive.
    """
    stripped = text.strip()
    if re.fullmatch(r"[+-]?\d+(\.\d+)?", stripped):
        raise QuantityError(
            f"{what} {text!r} has no unit; write it as a Kubernetes quantity such as "
            f"{stripped}Gi or {stripped}Mi"
        )
    value = parse_quantity(stripped)
    if value <= 0:
        raise QuantityError(f"{what} {text!r} must be greater than zero")
    # Kubernetes rounds storage requests up to whole bytes.
    return int(value.to_integral_value(rounding="ROUND_CEILING"))


def format_bytes(count: float) -> str:
    """Human-readable binary size, e.g. 1536 -> '1.5Ki', 10737418240 -> '10Gi'."""
    value = float(count)
    for unit in ("", "Ki", "Mi", "Gi", "Ti", "Pi"):
        if abs(value) < 1024 or unit == "Pi":
            text = f"{value:.1f}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_count(value: float) -> str:
    """Short count for a label or a message, three digits at most: 950, 12.3k, 368k, 1.25M."""
    magnitude = abs(value)
    if magnitude >= 1_000_000:
        return f"{value / 1_000_000:.3g}M"
    if magnitude >= 10_000:
        return f"{value / 1_000:.3g}k"
    if magnitude >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


@dataclass(frozen=True)
class Size:
    """A storage size as the user typed it and as bytes, parsed once at the edge.

    Manifests carry ``text`` (what the user wrote, so the PVC shows ``20Gi``, not a byte count);
    checks and comparisons use ``bytes``.
    """

    text: str
    bytes: int

    @classmethod
    def parse(cls, text: str, *, what: str = "size") -> Size:
        """Parse a size that must carry a unit.

        Raises:
            QuantityError: not a quantity, no unit, or not positive.
        """
        return cls(text.strip(), parse_size_bytes(text, what=what))

    def __str__(self) -> str:
        return self.text


def parse_duration_s(text: str) -> float:
    """Parse a kubectl-style duration ("90s", "30m", "1h", "2h30m", "1d").

    Raises:
        ValueError: when the text is not a duration.
    """
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    parts = re.findall(r"(\d+(?:\.\d+)?)([smhd])", text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        raise ValueError(f"{text!r} is not a duration (examples: 90s, 30m, 1h, 2h30m, 1d)")
    return sum(float(n) * units[u] for n, u in parts)
