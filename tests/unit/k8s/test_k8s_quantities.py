"""Quantities: our stdlib parser must agree with the official client's, and refuse bare numbers."""

from decimal import Decimal

import pytest
from kubernetes.utils import parse_quantity as client_parse_quantity

from kubectl_storage.core.k8s.quantities import (
    QuantityError,
    format_bytes,
    format_count,
    parse_quantity,
    parse_size_bytes,
)

SAMPLES = [
    "10Gi",
    "1Ti",
    "500Mi",
    "1.5Gi",
    "100M",
    "2G",
    "1k",
    "100m",
    "1e3",
    "1E6",
    "0.5Ki",
    "3",
    "7Ei",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_agrees_with_kubernetes_client(text: str) -> None:
    assert parse_quantity(text) == Decimal(client_parse_quantity(text))


@pytest.mark.parametrize("text", ["10GB", "Gi", "1.2.3Gi", "", "ten", "1Zi"])
def test_rejects_what_the_client_rejects(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)
    with pytest.raises(ValueError):  # noqa: PT011 - the client raises a plain ValueError
        client_parse_quantity(text)


def test_size_needs_a_unit() -> None:
    with pytest.raises(QuantityError, match=r"has no unit.*45Gi"):
        parse_size_bytes("45")


def test_size_in_bytes() -> None:
    assert parse_size_bytes("10Gi") == 10 * 2**30
    assert parse_size_bytes("1.5Mi") == 1572864
    assert parse_size_bytes("1k") == 1000


@pytest.mark.parametrize("text", ["0Gi", "-1Gi"])
def test_size_must_be_positive(text: str) -> None:
    with pytest.raises(QuantityError, match="greater than zero"):
        parse_size_bytes(text)


@pytest.mark.parametrize(
    ("count", "text"),
    [(0, "0"), (1536, "1.5Ki"), (10 * 2**30, "10Gi"), (123, "123"), (2**50, "1Pi")],
)
def test_format_bytes(count: int, text: str) -> None:
    assert format_bytes(count) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (4.25, "4.25"),
        (950, "950"),
        (9_999, "9999"),
        (12_345, "12.3k"),
        (368_123, "368k"),
        (1_124_000, "1.12M"),
        (-12_345, "-12.3k"),
    ],
)
def test_format_count_keeps_three_digits(value: float, text: str) -> None:
    assert format_count(value) == text


def test_inner_space_is_refused() -> None:
    # The Python client tolerates "5 Gi"; the API server's grammar does not, so neither do we.
    with pytest.raises(QuantityError):
        parse_quantity("5 Gi")
