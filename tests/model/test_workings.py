"""Worked examples computed node by node from real measurement files: the occupancy example ends
in the API's count, not the naive one; a step that disagrees with its measurement is a mismatch on
that node only; and every hostile step is an error at its own field, all of them at once, never a
traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudagloss.load.measurements import load_measurements
from cudagloss.model.claim_values import quantity
from cudagloss.model.claims import ClaimTypeError, Operand, parse
from cudagloss.model.corpus import FactValue
from cudagloss.model.measurement import Gate, Measurement, Result, record
from cudagloss.model.term import MeasurementCitation, Term
from cudagloss.model.worked import Step, WorkedExample
from cudagloss.model.workings import Working, shown, work

LIMITS = [
    Result("max_threads_per_sm", 2048, "threads/SM"),
    Result("max_blocks_per_sm", 32, "blocks/SM"),
    Result("registers_per_sm", 65536, "registers/SM"),
    Result("registers_per_thread", 12, "registers/thread"),
    Result("shared_memory_per_sm", 233472, "bytes"),
    Result("reserved_shared_memory_per_block", 1024, "bytes"),
    Result("api_blocks", 17, "blocks/SM"),
    Result("naive_blocks", 19, "blocks/SM"),
]
OCCUPANCY = [
    Step("Each block is one warp", id="threads", given="32 threads/block"),
    Step("Each block asks for", id="smem", given="12 KiB/block"),
    Step("Threads allow", id="by_threads", value="floor(ex.max_threads_per_sm / step.threads)"),
    Step("Blocks allow", id="by_blocks", value="ex.max_blocks_per_sm"),
    Step(
        "Registers allow",
        id="by_registers",
        value="floor(ex.registers_per_sm / (ex.registers_per_thread * step.threads))",
    ),
    Step("The SM has", id="sm_shared", value="ex.shared_memory_per_sm", per="SM"),
    Step("Naively, shared memory allows", id="naive", value="floor(step.sm_shared / step.smem)"),
    Step(
        "The naive count",
        value="min(step.by_threads, step.by_blocks, step.by_registers, step.naive)",
        matches="ex.naive_blocks",
    ),
    Step("Reserved per block", id="reserved", value="ex.reserved_shared_memory_per_block", per="block"),
    Step("Shared memory allows", id="by_shared", value="floor(step.sm_shared / (step.smem + step.reserved))"),
    Step(
        "The API's count",
        value="min(step.by_threads, step.by_blocks, step.by_registers, step.by_shared)",
        matches="ex.api_blocks",
    ),
]


def write(folder: Path, node: str, results: list[Result], gpu: str = "Example GPU") -> None:
    provenance = {"node": node, "gpu_name": gpu, "recorded_at": "2026-12-01T10:00:00+00:00"}
    record(Measurement("ex", "Limits", "sha256:now", "ok", provenance, [Gate("ok", True)], results), folder)


def replaced(results: list[Result], **values: object) -> list[Result]:
    return [Result(r.name, values.get(r.name, r.value), r.unit, r.description) for r in results]  # type: ignore[arg-type]


def worked(folder: Path, steps: list[Step], facts: list[FactValue] | None = None, cite: str = "ex") -> Working:
    term = Term(
        name="t",
        title="What is it?",
        definition="A term.",
        section="s",
        body="A body.",
        measurements=[MeasurementCitation(cite)],
        worked=[WorkedExample("example", "How many?", steps)],
    )
    measurements, problems = load_measurements(folder)
    assert problems == []
    return work(term, 0, measurements, facts or [])


def errors(w: Working) -> list[tuple[str, str]]:
    return [(e.where, e.message) for e in w.errors]


def test_the_occupancy_example_ends_in_the_apis_count_and_matches_both_counts(tmp_path: Path) -> None:
    write(tmp_path, "node-a", LIMITS)
    write(tmp_path, "node-b", LIMITS)
    w = worked(tmp_path, OCCUPANCY)
    assert (w.errors, w.mismatches, w.unverified) == ((), (), "")
    assert [n.node for n in w.nodes] == ["node-a", "node-b"]
    steps = [shown(q) if q else None for q in w.nodes[0].steps]
    assert steps == [
        "32 threads per block",
        "12 KiB per block",
        "64 blocks per SM",
        "32 blocks per SM",
        "170 blocks per SM",
        "233,472 bytes per SM",
        "19 blocks per SM",
        "19 blocks per SM",
        "1,024 bytes per block",
        "17 blocks per SM",
        "17 blocks per SM",
    ]


def test_a_step_that_disagrees_with_its_measurement_is_a_mismatch_on_that_node_only(tmp_path: Path) -> None:
    write(tmp_path, "node-a", LIMITS)
    write(tmp_path, "node-b", replaced(LIMITS, api_blocks=19))
    w = worked(tmp_path, OCCUPANCY)
    assert w.errors == ()
    assert [(m.step, m.node, shown(m.computed), m.measured.value) for m in w.mismatches] == [
        (10, "node-b", "17 blocks per SM", 19)
    ]


def test_within_allows_the_share_it_states_and_no_more(tmp_path: Path) -> None:
    write(
        tmp_path, "node-a", [Result("rate", 65.3, "TFLOP/s"), Result("sms", 132, "SMs"), Result("clock", 1980, "MHz")]
    )
    facts = [FactValue("per_sm", "256 FLOP/clock/SM", "lanes times two")]

    def peak(within: str | None) -> Working:
        step = Step("Peak", value="ex.sms * fact.per_sm * ex.clock", unit="TFLOP/s", matches="ex.rate", within=within)
        return worked(tmp_path, [step], facts)

    exact = peak(None)
    assert exact.errors == () and [(m.node, shown(m.computed)) for m in exact.mismatches] == [
        ("node-a", "66.9 TFLOP/s")
    ]
    assert peak("3%").mismatches == ()  # 2.4% below
    assert len(peak("2%").mismatches) == 1
    assert peak("2.5%").mismatches == ()


def test_every_hostile_step_is_an_error_at_its_own_field_all_at_once(tmp_path: Path) -> None:
    write(tmp_path, "node-a", LIMITS)
    facts = [FactValue("two", "2", "two")]
    steps = [
        Step("Uses a later step", id="first", value="step.later * 2"),
        Step("Uses itself", id="self", value="step.self + 1"),
        Step("Uses no such step", value="step.frist + ex.max_blocks_per_sm"),
        Step("Uses no such fact", value="fact.tow * ex.max_blocks_per_sm"),
        Step("Both", value="ex.max_blocks_per_sm", given="1 block"),
        Step("Neither"),
        Step("A given that is no number", given="many threads"),
        Step("A given per SM", given="132 blocks/SM"),
        Step("A rate given", given="4800 GB/s"),
        Step("Per a thing no GPU counts", value="ex.shared_memory_per_sm", per="bananas"),
        Step("Per on arithmetic", value="ex.shared_memory_per_sm * 2", per="SM"),
        Step("Matches no result", value="ex.api_blocks * 1", matches="not a ref"),
        Step("Matches itself", value="ex.api_blocks * 1", matches="ex.api_blocks"),
        Step("Within, alone", value="ex.api_blocks * 1", within="3%"),
        Step("Within, no share", value="ex.api_blocks * 1", matches="ex.naive_blocks", within="lots"),
        Step("Within, past all", value="ex.api_blocks * 1", matches="ex.naive_blocks", within="250%"),
        Step("Syntax", value="ex.api_blocks * (2"),
        Step("Python", value='__import__("os").system("id")'),
        Step("A huge number", value="ex.api_blocks * 1e400"),
        Step("Twice", id="later", value="ex.api_blocks * 2"),
        Step("Twice again", id="later", value="ex.api_blocks * 3"),
        Step("A bad id", id="Bad-Id", value="ex.api_blocks * 3"),
        Step("A bad unit", value="ex.api_blocks * 3", unit="<script>"),
        Step("Rounding two", value="floor(ex.api_blocks, 2)"),
    ]
    w = worked(tmp_path, steps, facts)
    assert w.nodes == () and w.mismatches == ()
    assert errors(w) == [
        ("steps[0].value", "step.later comes later (steps[19])"),
        ("steps[1].value", "step.self is this step"),
        ("steps[2].value", "no step 'step.frist' (did you mean 'first'?)"),
        ("steps[3].value", "no fact 'fact.tow' (did you mean 'two'?)"),
        ("steps[4]", "has both value and given"),
        ("steps[5]", "has neither value nor given"),
        ("steps[6].given", "'many threads' is not a number and a unit"),
        ("steps[7].given", "'132 blocks/SM' is a number per SM, which describes a GPU"),
        ("steps[8].given", "'4800 GB/s' is a rate, which describes a GPU"),
        ("steps[9].per", "'bananas' is not a thing a GPU counts"),
        ("steps[10].per", "per reads one measured result's unit; this value is not one"),
        ("steps[11].matches", "'not a ref' does not name a measured result"),
        ("steps[12].matches", "the working uses ex.api_blocks itself, so it would match whatever was measured"),
        ("steps[13].within", "says how close to matches, but there is no matches"),
        ("steps[14].within", "'lots' is not a share"),
        ("steps[15].within", "'250%' is not a share"),
        ("steps[16].value", "expected ')', found the end"),
        ("steps[17].value", "unknown name '__import__'"),
        ("steps[18].value", "number '1e400' is out of range"),
        ("steps[20].id", "'later' is also the id of steps[19]"),
        ("steps[21].id", "'Bad-Id' is not a step id"),
        ("steps[22].unit", "'<script>' is not a unit"),
        ("steps[23].value", "floor() takes one value"),
    ]


def test_a_mistake_in_the_values_is_an_error_at_its_step_naming_the_nodes_where_not_all(tmp_path: Path) -> None:
    write(tmp_path, "node-a", replaced(LIMITS, reserved_shared_memory_per_block=0))
    write(tmp_path, "node-b", LIMITS)
    steps = [
        Step("Per reserved byte", id="ratio", value="ex.shared_memory_per_sm / ex.reserved_shared_memory_per_block"),
        Step("Uses the step that failed", value="step.ratio * 2"),
        Step("Adds threads to blocks", value="ex.max_threads_per_sm + ex.max_blocks_per_sm"),
        Step("A condition", value="ex.api_blocks < ex.naive_blocks"),
        Step("Shown in another kind of unit", value="ex.api_blocks * 1", unit="GB/s"),
        Step("Matches a value of another kind", value="ex.api_blocks * 1", matches="ex.shared_memory_per_sm"),
        Step("Reads badly", value="ex.max_threads_per_sm * ex.shared_memory_per_sm"),
        Step("Per, already per", value="ex.max_blocks_per_sm", per="SM"),
        Step("A GPU's number, written", value="66 * 1000", unit="GB/s"),
        Step("A plain number, written", value="2 * 2"),
    ]
    w = worked(tmp_path, steps)
    assert [n.node for n in w.nodes] == ["node-a", "node-b"]
    assert errors(w) == [
        ("steps[0].value", "division by zero: ex.reserved_shared_memory_per_block is 0 (on node 'node-a')"),
        ("steps[2].value", "ex.max_threads_per_sm (threads/SM) added to ex.max_blocks_per_sm (blocks/SM)"),
        ("steps[3].value", "a step computes a number"),
        ("steps[4].unit", "the value works out in blocks/SM, which is not GB/s: their dimensions differ"),
        (
            "steps[5].matches",
            "the step works out in blocks/SM, but ex.shared_memory_per_sm is in bytes: their dimensions differ",
        ),
        ("steps[6].value", "its unit works out as threads·bytes/SM, which a reader cannot read"),
        ("steps[7].per", "the value is already counted in SM: blocks/SM"),
        ("steps[8].unit", "a number written in the step, in GB/s, is a rate, which describes a GPU"),
    ]
    assert w.nodes[0].steps[1] is None and w.nodes[1].steps[1] is not None  # unworked where its step failed


def test_values_out_of_range_and_of_other_types_are_errors_not_tracebacks(tmp_path: Path) -> None:
    write(tmp_path, "node-a", [Result("big", 2**52, "bytes"), Result("flag", True, ""), Result("name", "H200", "")])
    steps = [
        Step("Overflows", value="ex.big * 1e300 * 1e300", unit="bytes"),
        Step("A truth value", value="ex.flag"),
        Step("Text", value="ex.name * 2"),
        Step("Underflows", value="ex.big / ex.big / 1e300 / 1e300 / 1e300", unit="×"),
        Step("Out of range in its unit", value="ex.big * 1e292", unit="bit"),
    ]
    assert errors(worked(tmp_path, steps)) == [
        ("steps[0].value", "ex.big * 1e+300 is out of range (inf)"),
        ("steps[1].value", "a step computes a number"),
        ("steps[2].value", "'*' needs numbers, but ex.name is text"),
        ("steps[3].value", "ex.big / ex.big / 1e+300 / 1e+300 is out of range (0)"),
        ("steps[4].unit", "the value is out of range in bit"),
    ]
    with pytest.raises(ClaimTypeError, match="is not a finite number"):
        quantity(parse("a.nan"), lambda e, n: Operand(float("nan"), "bytes"))


def test_an_example_no_node_measured_is_unverified_and_one_citing_nothing_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "node-a", LIMITS)
    w = worked(tmp_path, [Step("Limits", value="other.max_blocks_per_sm")])
    assert errors(w) == [("steps[0].value", "other.max_blocks_per_sm: the term does not cite experiment 'other'")]
    (tmp_path / "other").mkdir()
    w = worked(tmp_path, [Step("Limits", value="other.max_blocks_per_sm")], cite="other")
    assert (w.errors, w.unverified, w.unmeasured) == ((), "no card has measured other.max_blocks_per_sm", ("other",))
    w = worked(tmp_path, [Step("Only a given", given="32 threads/block")])
    assert errors(w) == [("steps", "uses no measured value")]


def test_floor_and_ceil_round_in_base_units_whatever_the_prefixes() -> None:
    values = {"smem": Operand(233472, "bytes/SM"), "need": Operand(13, "KiB/block"), "t": Operand(1500, "µs")}

    def lookup(experiment: str, name: str) -> Operand:
        return values[name]

    value, unit = quantity(parse("floor(a.smem / a.need)"), lookup)  # 17.5 blocks per SM
    assert (value, str(unit)) == (17.0, "blocks/SM")
    assert quantity(parse("ceil(a.smem / a.need)"), lookup)[0] == 18.0
    assert quantity(parse("ceil(a.t)"), lookup)[0] == 1.0  # 1500 µs is 0.0015 s: a whole second up
