// Residue: what a node's state after the drill (and after every agent's
// revert_all) differs in from its snapshot before the drill. Pure: the two
// snapshots are the agent's `snapshot` replies (links with admin state and
// root qdisc; "host": stopped ranks, fdrill-burn processes and cgroups,
// fdrill's firewall rules). Each difference is one item
// {"node", "object", "before", "after"}, as events.jsonl's residue event
// lists them (docs/reference/formats.md).
#pragma once

#include <string>

#include "common/core/result.h"
#include "common/wire/wire.h"

namespace fdrill {

// The items NODE's state `after` differs in from `before` (a JSON array,
// empty when nothing differs). An `after` that could not be taken is one
// item: the snapshot itself. Host keys missing from either side (agents that
// predate the "host" snapshot) are not compared.
// `before` null: no snapshot was taken before (every link then counts as new).
Json SnapshotResidue(const std::string& node, Json before, const Result<Json>& after);

}  // namespace fdrill
