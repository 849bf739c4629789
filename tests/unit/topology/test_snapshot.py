"""The snapshot format: generated topologies written and read back are equal; broken
snapshots are diagnostics with file and key path; docs/spec.md documents every spec key."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostc.diagnostics import HostcError
from hostc.spec.model import HostSpec
from hostc.topology import snapshot
from hostc.topology.model import Link, Topology

from conftest import ROOT
from strategies import topologies


@st.composite
def rich_topologies(draw: st.DrawFn) -> Topology:
    topo = draw(topologies())
    names = [g.name for g in topo.gpus] + [n.name for n in topo.nics]
    links = []
    if len(names) > 1:
        kinds = st.sampled_from(["NV18", "PIX", "PXB", "PHB", "NODE", "SYS"])
        for a in names:
            for b in names:
                if a != b and draw(st.booleans()):
                    links.append(Link(a, b, draw(kinds)))
    cpus = [
        attrs.evolve(c, kind=draw(st.sampled_from([None, "IntelCore", "IntelAtom"])))
        if c.online
        else c
        for c in topo.cpus
    ]
    return attrs.evolve(
        topo,
        cpus=cpus,
        links=links,
        cmdline=draw(
            st.one_of(
                st.none(),
                st.text(
                    st.characters(min_codepoint=32, blacklist_categories=("Cc", "Cs")), min_size=1
                ).filter(str.strip),
            )
        ),
        unknown=draw(st.lists(st.sampled_from(["smt", "memory", "devices"]), unique=True)),
    )


@settings(max_examples=80, deadline=None)
@given(rich_topologies())
def test_written_and_read_back_is_equal(topo: Topology) -> None:
    text = snapshot.dumps(topo)
    assert snapshot.loads(text, "gen.toml") == topo
    assert snapshot.dumps(snapshot.loads(text)) == text


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda t: t.replace("version = 2", "version = 9"), "version"),
        (lambda t: t.replace('arch = "x86_64"', "arch = 5"), "arch"),
        (lambda t: t.replace('cores = "0 1 2 3"', 'cores = "0 1 2 3 9"'), "nodes[0].cores"),
        (lambda t: t.replace('cores = "0 1 2 3"', 'cores = "0 1 2 2,3"'), "nodes[0].cores"),
        (lambda t: t.replace('0 = "0-3"', 'x = "0-3"'), "packages.x"),
        (lambda t: t.replace('cpus = "0-3"', 'cpus = "0-3,99999"'), "nodes[0].cpus"),
        (lambda t: t.replace("memory_mib = 65536", "memory_mib = -1", 1), "nodes[0].memory_mib"),
        (lambda t: t.replace("    10,\n", "    12,\n", 1), "nodes[0].distances"),
        (lambda t: t.replace("version = 2\n", "version = 2\nbogus = 1\n"), "bogus"),
    ],
)
def test_broken_snapshot_names_the_key(edit: object, path: str) -> None:
    from topogen import machine

    text = snapshot.dumps(machine(packages=1, cores_per_node=4, smt=1))
    broken = edit(text)  # type: ignore[operator]
    assert broken != text
    with pytest.raises(HostcError) as e:
        snapshot.loads(broken, "snap.toml")
    assert any(
        str(d.path) == path and d.file == "snap.toml" and d.line for d in e.value.diagnostics
    ), e.value


def test_spec_doc_documents_every_spec_key() -> None:
    readme = (ROOT / "docs" / "spec.md").read_text()
    missing = []
    for top in attrs.fields(HostSpec):
        assert top.type is not None
        sub = top.type if isinstance(top.type, type) else None
        names = [top.name]
        if sub is not None and attrs.has(sub):
            names += [f"{top.name}.{f.name}" for f in attrs.fields(sub)]
        missing += [n for n in names if n.split(".")[-1] not in readme]
    assert missing == []
