"""The kubelet topology manager's hint merge, as pure functions, so check can ask the
kubelet's own question: would this pod be admitted under this policy?

Mirrors kubernetes `pkg/kubelet/cm/topologymanager/policy.go`:

- every hint provider (CPU manager, memory manager, device manager) offers one hint per
  set of NUMA nodes that can satisfy the request; a hint is *preferred* when its set has
  the fewest nodes any satisfying set has (`generateCPUTopologyHints`,
  `generateDeviceTopologyHints`: "preferred ... minAffinitySize");
- `mergePermutation` ANDs one hint per provider, and the merged hint is preferred only if
  all affinities are equal and all are preferred ("Only mark preferred if all affinities
  are equal", "Only mark preferred if all affinities are preferred");
- the best merged hint is a preferred one over a non-preferred one, then the narrower
  (`HintMerger.compare`); `restricted` and `single-numa-node` admit only a preferred best
  hint (`canAdmitPodResult`), and `single-numa-node` first drops every hint wider than one
  node (`filterSingleNumaHints`); `none` and `best-effort` admit every pod.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import attrs

from hostc import vocab
from hostc.record import Record


@attrs.frozen(repr=False, eq=False)
class Hint(Record):
    """A TopologyHint: the NUMA nodes (None: the provider has no preference) and preferred."""

    affinity: frozenset[int] | None
    preferred: bool


def provider_hints(request: int, per_node: Mapping[int, int]) -> tuple[Hint, ...]:
    """Every set of nodes whose capacity covers `request`, preferred when it is one of the
    narrowest such sets.  No request: no preference (one hint without affinity)."""
    if request <= 0:
        return (Hint(None, True),)
    nodes = sorted(per_node)
    fits = [
        frozenset(c)
        for size in range(1, len(nodes) + 1)
        for c in itertools.combinations(nodes, size)
        if sum(per_node[n] for n in c) >= request
    ]
    narrowest = min((len(s) for s in fits), default=0)
    return tuple(Hint(s, len(s) == narrowest) for s in fits)


def merge_permutation(default: frozenset[int], permutation: Sequence[Hint]) -> Hint:
    """policy.go mergePermutation: AND of the affinities; preferred only when every
    affinity is equal and every hint is preferred."""
    preferred = True
    affinities = [h.affinity for h in permutation if h.affinity is not None]
    for h in permutation:
        if h.affinity is not None and h.affinity != affinities[0]:
            preferred = False
        if not h.preferred:
            preferred = False
    merged = default
    for a in affinities:
        merged = merged & a
    return Hint(merged, preferred)


def _better(current: Hint | None, candidate: Hint) -> Hint | None:
    """HintMerger.compare, for what admission depends on: preferred first, then narrower."""
    if not candidate.affinity:
        return current
    if current is None or (candidate.preferred and not current.preferred):
        return candidate
    if current.preferred and not candidate.preferred:
        return current
    assert current.affinity is not None
    if len(candidate.affinity) < len(current.affinity):
        return candidate
    return current


def best_hint(
    nodes: Sequence[int], providers: Sequence[Sequence[Hint]], single_node: bool = False
) -> Hint | None:
    """The merged hint the topology manager picks (None: no permutation has any node)."""
    if single_node:
        providers = [
            [h for h in hints if h.affinity is None or len(h.affinity) == 1] for hints in providers
        ]
    default = frozenset(nodes)
    best: Hint | None = None
    for permutation in itertools.product(*providers):
        best = _better(best, merge_permutation(default, permutation))
    return best


def admits(
    policy: vocab.TopologyPolicy, nodes: Sequence[int], providers: Sequence[Sequence[Hint]]
) -> bool:
    """Whether the topology manager admits a pod whose providers offer these hints."""
    if policy in (vocab.TopologyPolicy.NONE, vocab.TopologyPolicy.BEST_EFFORT):
        return True
    single = policy is vocab.TopologyPolicy.SINGLE_NUMA_NODE
    best = best_hint(nodes, providers, single_node=single)
    return best is not None and best.preferred
