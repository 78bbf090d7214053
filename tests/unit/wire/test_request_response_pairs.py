"""Each request class names its response type (``Request[R]``, for type checking), and the
codec pairs them at run time through ``REQUEST_TYPES``: both must agree."""

from __future__ import annotations

import typing

import pytest

from rillet.wire.messages import REQUEST_TYPES
from rillet.wire.request import Request


@pytest.mark.parametrize(
    ("request_type", "response_type"),
    list(REQUEST_TYPES.values()),
    ids=lambda t: t.__name__,
)
def test_the_typed_response_is_the_one_the_codec_decodes(
    request_type: type, response_type: type
) -> None:
    (base,) = (b for b in request_type.__orig_bases__ if typing.get_origin(b) is Request)
    (named,) = typing.get_args(base)
    name = named.__forward_arg__ if isinstance(named, typing.ForwardRef) else named.__name__
    assert name == response_type.__name__
    assert vars(__import__(request_type.__module__, fromlist=["_"]))[name] is response_type
