"""InitProducerId: an idempotent producer's id (epoch 0), from this broker's id block; a
transactional producer's comes from the transaction coordinator (handlers.transactions)."""

from __future__ import annotations

import logging

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.deferred import Deferred
from rillet.broker.handlers.transactions import handle_txn_init_producer_id
from rillet.broker.replica.producer_ids import ProducerIdUnavailable
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import InitProducerIdRequest, InitProducerIdResponse

log = logging.getLogger(__name__)


def handle_init_producer_id(
    ctx: BrokerContext, req: InitProducerIdRequest
) -> InitProducerIdResponse | Deferred[InitProducerIdResponse]:
    if req.transactional_id is not None:
        return handle_txn_init_producer_id(ctx, req)
    return _init_producer_id(ctx)


async def _init_producer_id(ctx: BrokerContext) -> InitProducerIdResponse:
    source = ctx.producer_ids
    if source is None:
        return InitProducerIdResponse(
            ErrorCode.COORDINATOR_NOT_AVAILABLE, error_message="no producer id source"
        )
    try:
        producer_id = await source.next_id()
    except ProducerIdUnavailable as exc:
        log.info("no producer id to hand out: %s", exc)
        return InitProducerIdResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE, error_message=str(exc))
    return InitProducerIdResponse(ErrorCode.NONE, producer_id, 0)
