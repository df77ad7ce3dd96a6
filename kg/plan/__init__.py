"""Planning a write order: pure Python, no database.

The writer reads the state an order touches in one query (entities by name and id,
their type in the pair, the pair's active facts of the relations involved, the
timeline chains referenced), then this module decides triple by triple — exactly as if
the triples were written one after another — and returns the results and one set of
operations that the writer applies in a single query.
"""

from kg.plan.history import History
from kg.plan.orders import (
    Refs,
    Rejected,
    Unread,
    held_together,
    order_status,
    precheck,
    refs_of,
    reject_reason,
)
from kg.plan.planner import Planner, Resolved, plan_order, same_entity
from kg.plan.state import (
    ChainState,
    EntityState,
    FactState,
    Operations,
    State,
    Taken,
    as_utc,
    day_start,
    new_id,
    precision_end,
    taken_of,
)

__all__ = [
    "ChainState",
    "EntityState",
    "FactState",
    "History",
    "Operations",
    "Planner",
    "Refs",
    "Rejected",
    "Resolved",
    "State",
    "Taken",
    "Unread",
    "as_utc",
    "day_start",
    "held_together",
    "new_id",
    "order_status",
    "plan_order",
    "precheck",
    "precision_end",
    "refs_of",
    "reject_reason",
    "same_entity",
    "taken_of",
]
