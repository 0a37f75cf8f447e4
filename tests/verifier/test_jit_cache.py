"""jit-cache's results on the CPU: cache file names, sizes and counts are information a re-run
shows and never calls CHANGED; whether a path used the cache stays a compared fact, and load
times are host costs."""

from __future__ import annotations

from typing import Any

from verifier.experiments import jit_cache as jc

from cudagloss.merge.rerun import compare_result
from cudagloss.model.measurement import Result


def ptx_case(entry: str, size: int, first: float = 0.015) -> dict[str, list[Any]]:
    # Fixture numbers of plausible H200 size, written by hand for this test: not measurements.
    return {
        "first_s": [first, first * 1.1, first * 0.9],
        "second_s": [0.0003, 0.00031, 0.00029],
        "entries": [1, 1, 1],
        "load_entries": [1, 1, 1],
        "listings": [f"{entry} ({size} B), index (32 B)"] * 3,
    }


def by_name(results: list[Result]) -> dict[str, Result]:
    return {r.name: r for r in results}


def test_listings_and_counts_are_info_and_the_facts_are_compared() -> None:
    results = by_name(jc.case_results("ptx_file", ptx_case("3/f/b483977df45f58", 5220)))
    info = {name for name, r in results.items() if r.method == "info"}
    assert info == {"ptx_file_cache_entries", "ptx_file_load_entries", "ptx_file_cache_listing"}
    assert all("not compared on re-runs" in results[name].description for name in info)
    assert results["ptx_file_cache_used"].value is True and results["ptx_file_cache_used"].method == ""
    assert results["ptx_file_second_faster"].value is True and results["ptx_file_second_faster"].method == ""
    assert results["ptx_file_speedup"].value == 50.0 and results["ptx_file_speedup"].method == ""
    for name in ("first_load_median", "first_load_min", "first_load_max", "second_load_median"):
        r = results[f"ptx_file_{name}"]
        assert r.method == "host" and r.unit == "ms", name
        assert r.description.startswith("host cost: ") and r.description.endswith("the host CPU is in the provenance")
    assert results["ptx_file_first_load_median"].samples == [15.0, 16.5, 13.5]


def test_a_sass_path_added_no_entry_and_was_not_faster_the_second_time() -> None:
    raw = ptx_case("", 0, first=0.0003) | {"entries": [0] * 3, "load_entries": [0] * 3, "listings": ["no files"] * 3}
    results = by_name(jc.case_results("cubin_data", raw))
    assert results["cubin_data_cache_used"].value is False
    assert results["cubin_data_second_faster"].value is False


def test_other_file_names_and_sizes_on_a_fresh_node_are_info_not_changed() -> None:
    """What a fresh node with the same recorded environment gave: other names and sizes, one
    more entry; the re-run shows them (INFO) and the facts are SAME, so nothing fails."""
    old = jc.case_results("ptx_file", ptx_case("3/f/b483977df45f58", 5220))
    fresh = ptx_case("a/0/77e0c1d2b3a4f5", 5316) | {"entries": [2, 2, 2], "load_entries": [2, 2, 2]}
    new = by_name(jc.case_results("ptx_file", fresh))
    verdicts = {r.name: compare_result(r, new[r.name]).verdict for r in old}
    assert verdicts["ptx_file_cache_listing"] == "INFO"
    assert verdicts["ptx_file_cache_entries"] == "INFO" and verdicts["ptx_file_load_entries"] == "INFO"
    assert verdicts["ptx_file_cache_used"] == "SAME" and verdicts["ptx_file_second_faster"] == "SAME"
    assert "CHANGED" not in verdicts.values()


def test_two_info_results_with_different_values_are_info_and_a_fact_that_flips_is_changed() -> None:
    old = Result("init_only_cache_listing", "no files", "", "the files", method="info")
    new = Result("init_only_cache_listing", "index (32 B)", "", "the files", method="info")
    assert compare_result(old, new).verdict == "INFO"
    assert compare_result(old, old).verdict == "SAME"
    flipped = compare_result(Result("x_cache_used", False), Result("x_cache_used", True))
    assert flipped.verdict == "CHANGED"


def test_a_control_says_whether_it_wrote_the_cache_as_a_fact_and_what_it_wrote_as_info() -> None:
    found = {"b/": (0, 1), "b/1/04f89cd8e91a03": (3853, 2), "index": (48, 3)}
    results = by_name(jc.control_results("nvrtc_only_sm_90", found, "NVRTC alone"))
    assert results["nvrtc_only_sm_90_wrote_cache"].value is True
    assert results["nvrtc_only_sm_90_wrote_cache"].method == ""
    assert results["nvrtc_only_sm_90_entries"].value == 1 and results["nvrtc_only_sm_90_entries"].method == "info"
    assert results["nvrtc_only_sm_90_cache_listing"].value == "b/1/04f89cd8e91a03 (3853 B), index (48 B)"
    empty = by_name(jc.control_results("init_only", {}, "cuInit alone"))
    assert empty["init_only_wrote_cache"].value is False and empty["init_only_entries"].value == 0
    assert empty["init_only_cache_listing"].value == "no files"


def test_ptx_jit_load_and_init_times_are_host_costs_too() -> None:
    from verifier.experiments import ptx_jit

    results = ptx_jit.host_timing("cuinit", [0.13, 0.14, 0.12], "cuInit and primary context in a fresh process")
    assert [r.name for r in results] == ["cuinit_median", "cuinit_min", "cuinit_max"]
    assert all(r.method == "host" and r.unit == "ms" for r in results)
    assert results[0].value == 130.0 and results[0].samples == [130.0, 140.0, 120.0]
    assert results[0].description == (
        "host cost: cuInit and primary context in a fresh process (median); the host CPU is in the provenance"
    )
