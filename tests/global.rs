//! Global memory (`uat::global`) in real multi-rank jobs: exact results at
//! every rank count of this conduit (steals certain), a 1 MiB task result,
//! misuse refused with a message, and — over real UDP, where other ranks'
//! memory is cached — fork-join coherence, with a cache broken on purpose
//! caught by the same check.

mod common;

use common::{bin, cache_settings, example, rank_counts, run_job_with_env, two_ranks_apart, JobOutput};

fn global_memory(launcher: &[&str], args: &[&str], env: &[(&str, &str)]) -> JobOutput {
    run_job_with_env(launcher, &example("global_memory"), args, env)
}

fn assert_exact(out: &JobOutput) {
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    for key in ["sum_ok", "max_ok", "leaves_ok", "big_ok"] {
        assert_eq!(json[key], true, "{key}: {}", out.describe());
    }
}

#[test]
fn coherence_holds_at_the_edges_fresh_memory_atomics_and_collectives() {
    // A new allocation under a pinned block reads 0; the flag/data pattern
    // with Release/Acquire reads the data; writes between runs reach their
    // home at a collective and invalidate after one. Cache on and off.
    let (launcher, env) = two_ranks_apart();
    for &cache in cache_settings() {
        let mut env = env.clone();
        env.push(("UAT_CACHE", cache));
        let out = run_job_with_env(&launcher, &example("global_coherence"), &[], &env);
        assert_eq!(out.code, Some(0), "cache {cache}: {}", out.describe());
        let json = out.json();
        assert_eq!(json["fresh_zeroed"], 0, "cache {cache}: {}", out.describe());
        assert_eq!(json["flag_data"]["after"], 42, "cache {cache}: {}", out.describe());
        assert_eq!(
            json["flag_data_home_reader"]["after"],
            42,
            "cache {cache}: {}",
            out.describe()
        );
        assert_eq!(
            json["flag_data"]["reader_rank"],
            1,
            "the reader ran on the other rank: {}",
            out.describe()
        );
        assert_eq!(json["between_runs_looks"], 2, "cache {cache}: {}", out.describe());
        // Either side (or both) holding a read checkout of other elements
        // of the data's cache block: the Release still writes the data
        // back, the Acquire still refreshes it.
        assert_eq!(
            json["flag_data_checkout_held"],
            serde_json::json!([42, 42, 42, 42, 42, 42]),
            "cache {cache}: {}",
            out.describe()
        );
    }
    if uat::runtime::CONDUIT.name() != "smp" {
        // The same cells catch a cache broken on purpose.
        for fault in ["no-write-back", "no-invalidate"] {
            let mut env = env.clone();
            env.push(("UAT_CACHE_FAULT", fault));
            let out = run_job_with_env(&launcher, &example("global_coherence"), &[], &env);
            let held = out.json()["flag_data_checkout_held"].clone();
            assert!(
                out.code == Some(1) && held.as_array().is_some_and(|a| a.iter().any(|v| v != 42)),
                "{fault}: {}",
                out.describe()
            );
        }
    }
}

#[test]
fn freeing_memory_inside_a_checkout_of_it_is_refused() {
    let (launcher, env) = two_ranks_apart();
    let out = run_job_with_env(
        &launcher,
        &example("global_coherence"),
        &["--misuse", "free-in-checkout"],
        &env,
    );
    assert!(out.code.is_some_and(|c| c != 0), "{}", out.describe());
    assert!(
        out.stderr
            .contains("GlobalSlice::free inside a checkout of the same memory"),
        "{}",
        out.describe()
    );
}

/// The use-after-free probe (`examples/use_after_free.rs`): a copy of a
/// freed slice checked out, an allocation that reuses its block made inside
/// the checkout. The model allows the checkout to read (7, 7) or the job to
/// end naming the rule; this build refuses every shape: at the checkout
/// where the allocation's header is mapped here, at the allocation (or the
/// atomic) elsewhere, before any byte under the checkout changes. One rank,
/// and 2 ranks apart with the probe on each: on rank 1 (the freed block's
/// home is the other rank) with the cache on, where the mirror holds it, and
/// on rank 0 with the cache off where memory is apart (`cache_settings`):
/// each rank and each cache setting once, not every pair.
#[test]
fn a_slice_used_after_its_free_is_refused_before_its_bytes_change() {
    let (launcher, env) = two_ranks_apart();
    let mut setups: Vec<(Vec<&str>, &str, &str)> = vec![(vec!["-n", "1"], "0", "on")];
    let caches = cache_settings();
    setups.push((launcher.clone(), "1", caches[0]));
    setups.push((launcher.clone(), "0", caches[caches.len() - 1]));
    for (launcher, rank, cache) in &setups {
        for shape in ["local", "on", "distributed", "atomic", "stale-atomic"] {
            let mut env = env.clone();
            env.push(("UAT_CACHE", cache));
            let out = run_job_with_env(
                launcher,
                &example("use_after_free"),
                &["--shape", shape, "--rank", rank],
                &env,
            );
            let what = format!("{launcher:?} --shape {shape} --rank {rank}, cache {cache}");
            assert!(out.code.is_some_and(|c| c != 0), "{what}: {}", out.describe());
            assert!(
                out.stderr.contains("a checkout of freed memory") && out.stderr.contains("Rule: never use"),
                "{what}: {}",
                out.describe()
            );
            assert!(!out.stdout.contains("\"second\":0"), "{what}: {}", out.describe());
        }
    }
}

#[test]
fn a_distributed_array_is_filled_and_summed_exactly_and_a_task_returns_1_mib() {
    for &n in rank_counts() {
        let out = global_memory(&["-n", &n.to_string()], &["-n", "300000"], &[("UAT_FORCE_STEAL", "1")]);
        assert_exact(&out);
    }
}

#[test]
fn a_checkout_held_across_spawn_is_refused() {
    let out = global_memory(&["-n", "2"], &["--misuse", "spawn-in-checkout"], &[]);
    assert_ne!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stderr
            .contains("uat::spawn was called inside a checkout of global memory"),
        "{}",
        out.describe()
    );
}

#[test]
fn a_second_free_is_refused() {
    // A distributed slice; rank 0's local block freed twice by rank 1 (a
    // stolen continuation; ranks apart where the conduit allows: one
    // compare-and-swap and a GLOBAL_FREE message); a handle of an earlier
    // generation of a reused address.
    let (apart, env) = two_ranks_apart();
    for (launcher, misuse, env) in [
        (vec!["-n", "2"], "double-free", vec![]),
        (apart, "double-free-stolen", env),
        (vec!["-n", "1"], "stale-free", vec![]),
    ] {
        let out = global_memory(&launcher, &["--misuse", misuse], &env);
        assert_ne!(out.code, Some(0), "{misuse}: {}", out.describe());
        assert!(out.stderr.contains("was freed twice"), "{misuse}: {}", out.describe());
        if misuse == "double-free-stolen" {
            assert!(
                out.stderr.contains("freeing rank 0's block on rank 1"),
                "the continuation was stolen: {}",
                out.describe()
            );
        }
    }
}

#[test]
fn over_real_udp_the_cache_is_coherent_and_a_broken_one_is_caught() {
    if uat::runtime::CONDUIT.name() != "udp" {
        return;
    }
    let udp = ["--real-udp", "-n", "2"];
    let looks = |env: &[(&str, &str)]| {
        let out = global_memory(&udp, &["--coherence", "-n", "100000"], env);
        let json = out.json();
        assert_eq!(
            json["coherence_ranks"],
            serde_json::json!([1, 0, 1]),
            "the task moved between the ranks: {}",
            out.describe()
        );
        json["coherent_looks"].as_u64().unwrap()
    };
    assert_eq!(looks(&[]), 3, "cache on");
    assert_eq!(looks(&[("UAT_CACHE", "off")]), 3, "cache off");
    // The check can fail: without write-back the second look sees stale
    // memory, without invalidation the third sees a stale cached copy.
    assert_eq!(looks(&[("UAT_CACHE_FAULT", "no-write-back")]), 2);
    assert_eq!(looks(&[("UAT_CACHE_FAULT", "no-invalidate")]), 2);
    for &cache in cache_settings() {
        let out = global_memory(
            &udp,
            &["-n", "300000"],
            &[("UAT_CACHE", cache), ("UAT_FORCE_STEAL", "1")],
        );
        assert_exact(&out);
    }
}

fn cilksort(launcher: &[&str], args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let out = run_job_with_env(launcher, &bin("cilksort"), args, env);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(json["verified"], true, "{}", out.describe());
    json
}

#[test]
fn cilksort_of_2_pow_20_keys_is_exact_at_every_rank_count() {
    for &n in rank_counts() {
        let json = cilksort(&["-n", &n.to_string()], &["-n", "1048576", "--seed", "5"], &[]);
        // Parallel all the way: the distribution sort's blocks and buckets
        // and cilksort's leaves below them are tasks (about 570 at 2^20).
        assert!(json["stats"]["spawns"].as_u64().unwrap() > 256, "{json}");
    }
    // Odd sizes, below and around the cut-offs, and the serial elision.
    for keys in ["1", "3", "2049", "100003"] {
        cilksort(&["-n", "2"], &["-n", keys, "--seed", "11"], &[]);
    }
    cilksort(&["-n", "1"], &["-n", "65536", "--seq"], &[]);
    // The library's sort (uat::pattern::sort_unstable_in).
    let lib = cilksort(&["-n", "2"], &["-n", "100003"], &[]);
    assert_eq!(lib["solver"], "cilksort", "{lib}");
}

#[test]
fn over_real_udp_cilksort_is_exact_with_the_cache_on_and_off() {
    if uat::runtime::CONDUIT.name() != "udp" {
        return;
    }
    let on = cilksort(&["--real-udp", "-n", "2"], &["-n", "1048576"], &[("UAT_CACHE", "on")]);
    assert!(
        on["stats"]["cache_hits"].as_u64().unwrap() > 0,
        "the cache was used: {on}"
    );
    let off = cilksort(&["--real-udp", "-n", "2"], &["-n", "1048576"], &[("UAT_CACHE", "off")]);
    assert_eq!(off["stats"]["cache_hits"], 0, "{off}");
}

#[test]
fn cilksort_runs_sort_unstable_as_its_baseline() {
    let json = cilksort(&["-n", "1"], &["-n", "100003", "--seed", "9", "--sort-unstable"], &[]);
    assert_eq!(json["solver"], "sort_unstable", "{json}");
    assert_eq!(json["stats"]["spawns"], 0, "{json}");
}

fn knapsack(launcher: &[&str], args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let out = run_job_with_env(launcher, &bin("knapsack"), args, env);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(
        json["verified"],
        true,
        "against the dynamic program: {}",
        out.describe()
    );
    json
}

#[test]
fn knapsack_is_exact_against_dynamic_programming_for_every_class_with_steals() {
    for class in ["uncorrelated", "weak", "strong"] {
        for &n in rank_counts() {
            let json = knapsack(
                &["-n", &n.to_string()],
                &["--class", class, "--seed", "4", "--force-steal"],
                &[],
            );
            assert!(json["nodes"].as_u64().unwrap() >= 1_000_000, "{json}");
            if n > 1 {
                assert!(json["stats"]["steals_succeeded"].as_u64().unwrap() > 0, "{json}");
            }
        }
    }
    // The serial elision, and the dynamic program as the timed path.
    let seq = knapsack(&["-n", "1"], &["--class", "weak", "--seed", "8", "--seq"], &[]);
    assert_eq!(seq["stats"]["spawns"], 0, "{seq}");
    let dp = knapsack(&["-n", "1"], &["--class", "weak", "--seed", "8", "--verify-dp"], &[]);
    assert_eq!(
        (dp["solver"].clone(), dp["result"].clone()),
        ("dp".into(), seq["result"].clone())
    );
}

#[test]
fn over_real_udp_knapsack_shares_its_bound_through_a_remote_atomic() {
    if uat::runtime::CONDUIT.name() != "udp" {
        return;
    }
    for refresh in ["1", "1024"] {
        knapsack(
            &["--real-udp", "-n", "2"],
            &[
                "--class",
                "strong",
                "--seed",
                "2",
                "--force-steal",
                "--bound-refresh",
                refresh,
            ],
            &[],
        );
    }
}
