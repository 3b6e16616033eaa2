#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
# Mutation testing on a many-core machine that cannot generate mutants itself (no network; another Python):
# the mutants and mutmut's test mapping are made here, carried there, run there, and the verdicts come back.
#
#   # here, in a mutation clone (git clone -q . /tmp/m && cd /tmp/m), once: mutants and the test mapping
#   SKIP_CLEAN=1 python scripts/mutmut_run.py run 'cuda_fatbin._term.x_nothing*'   # stops after the mapping
#   bash scripts/mutation_device.sh pack /path/to/checkout 'cuda_fatbin._cli.*' 'cuda_fatbin._arch.*'
#   # there (the device tool runs it in the checkout, carrying .mutation-device and the wheels in .whl):
#   bash scripts/mutation_device.sh run 540            # seconds it may take, all steps included
#   # here again, in the clone: keep its kills, list what is left for this machine
#   python scripts/mutation_merge.py /path/to/meta.tgz
#   # the next call: put the mapping.tgz it returned (its test mapping) in the checkout's .mutation-device, so
#   # that call maps no test ids again (a few minutes when that machine's toolchain makes other ids)
#   # there, when the merge refuses a run (a mutant recorded as equivalent was killed): the tests that kill
#   # those mutants there, and whether they fail there without them too (scripts/mutation_why.py)
#   bash scripts/mutation_device.sh why NAME...                # writes $OUT/why.txt
#
# "run" unpacks the clone's commit over the checkout (mutmut copies the tests from there: they must be the
# ones the mapping was made with), runs the CPU suite once on the unmutated commit with every core to find
# the tests that fail on that machine for its own reasons (they are deselected: a test failing unmutated
# would count every mutant it reaches as killed), then mutmut without its serial clean pass
# (scripts/mutmut_run.py), and packs every verdict into $OUT/meta.tgz, also when stopped at the deadline.
set -uo pipefail
cd "$(dirname "$0")/.."
here=${MUTATION_DEVICE_DIR:-.mutation-device}
case "${1:-}" in
pack)
    checkout=$2; shift 2
    out="$checkout/$here"
    mkdir -p "$out"
    test -f mutants/mutmut-stats.json || { echo "no mutants/mutmut-stats.json: run mutmut here first" >&2; exit 2; }
    git diff --quiet HEAD -- src tests || { echo "the clone has uncommitted changes to src or tests: the mapping must match its commit" >&2; exit 2; }
    tar czf "$out/mutants.tgz" mutants
    git archive HEAD | gzip > "$out/commit.tgz"
    printf '%s\n' "$@" > "$out/names.txt"
    ls -la "$out"
    ;;
run|why)
    start=$(date +%s)
    budget=${2:-540}
    root=$PWD
    py=${PYTHON:-python3}
    if [ -d .whl ]; then
        $py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/whl .whl/*.whl \
            || exit 3
        export PYTHONPATH=/tmp/whl
    fi
    export CUDA_FATBIN_TEST_CACHE=$root/.mutation-cache PYTHONUNBUFFERED=1
    # every failing test and the mutant it ran against (tests/conftest.py): how a kill made there is explained
    export CUDA_FATBIN_FAILURE_LOG=${OUT:-/tmp}/failures.tsv
    # The GPU hidden from every step (MUTATION_GPU=1 keeps it): the CPU suite needs none, and a driver that
    # tests initialise in mutmut's main process (below) is unusable in the processes it forks from it.
    [ "${MUTATION_GPU:-0}" = 1 ] || export CUDA_VISIBLE_DEVICES=
    tar xzf "$here/commit.tgz" -C "$root"      # src and tests as the mapping saw them
    find src tests -exec touch -d 2020-01-01 {} +   # older than the mutants: mutmut generates nothing again
    tar xzf "$here/mutants.tgz"
    # the mapping an earlier call made there (its mapping.tgz, carried back in .mutation-device): with it the
    # test ids of that machine are known, and the mapping step below finds nothing new to run
    [ -f "$here/mapping.tgz" ] && tar xzf "$here/mapping.tgz" -C mutants
    find mutants -exec touch {} +
    jobs=$($py -c 'import os; print(len(os.sched_getaffinity(0)))')
    # the mutated modules are large (16 MB of source for _cli.py, 20 MB for _probe.py): compiled once, on every
    # core, instead of by each mutmut process as it lists the tests (about 3 minutes a process there in the
    # eleventh session; here the listing went from 29 s to 7 s)
    $py -m compileall -q -j "$jobs" mutants/src > /dev/null
    echo "mutants compiled at $(( $(date +%s) - start )) s"
    if [ "$1" = why ]; then   # which tests kill these mutants there, and do they pass there without them
        shift
        [ -f "$here/deselect.txt" ] && export PYTEST_ADDOPTS=$(sed 's/^/--deselect /' "$here/deselect.txt" | tr '\n' ' ')
        $py scripts/mutation_why.py "$@" --out "${OUT:-/tmp}/why.txt"
        exit
    fi
    # The pre-run also fills the test cache with the fixtures' unmutated values (tests/fatbin_testing.py
    # keeps none a mutant computed): skip it only on a machine still warm from an earlier call, whose
    # cache is there, with that call's failing tests carried back in deselect.txt.
    if [ -f "$here/deselect.txt" ] && [ -d "$CUDA_FATBIN_TEST_CACHE" ]; then
        deselect=$(sed 's/^/--deselect /' "$here/deselect.txt" | tr '\n' ' ')
    else
        rm -rf /tmp/unmutated && mkdir -p /tmp/unmutated && tar xzf "$here/commit.tgz" -C /tmp/unmutated
        (cd /tmp/unmutated && PYTHONPATH=${PYTHONPATH:-}:/tmp/unmutated/src timeout 240 $py -m pytest -m 'not gpu' \
            -p no:randomly -q --timeout=120 --hypothesis-profile=mutation --ignore=tests/test_distributed.py \
            --ignore=tests/gpu --ignore=tests/test_docs.py --ignore=tests/test_interrupt.py -n "$jobs" \
            -p no:cacheprovider tests > /tmp/unmutated.log 2>&1)
        # the test ids there: mutmut maps each id it has not seen in the main process, serially (in the ninth
        # session 27 new ids took about 200 s of a call); compare with `pytest --collect-only -q` here
        (cd /tmp/unmutated && PYTHONPATH=${PYTHONPATH:-}:/tmp/unmutated/src timeout 60 $py -m pytest -m 'not gpu' \
            --collect-only -q -p no:randomly --ignore=tests/test_distributed.py --ignore=tests/gpu \
            --ignore=tests/test_docs.py --ignore=tests/test_interrupt.py -p no:cacheprovider tests \
            > /tmp/collected.txt 2>&1)
        tail -n 12 /tmp/unmutated.log
        cp /tmp/unmutated.log "${OUT:-/tmp}/unmutated.log"
        grep -aq " passed" /tmp/unmutated.log || { echo "the unmutated suite did not finish: no mutants run"; exit 3; }
        grep -a '^FAILED' /tmp/unmutated.log | sed 's/^FAILED \([^ ]*\).*/\1/' > "${OUT:-/tmp}/deselect.txt"
        deselect=$(sed 's/^/--deselect /' "${OUT:-/tmp}/deselect.txt" | tr '\n' ' ')
    fi
    export PYTEST_ADDOPTS="$deselect"
    # mutmut maps the tests it has not seen (test ids can differ here: parameters drawn from NVRTC's arch
    # list) by running them in its main process, then forks each mutant's test process from that process.
    # NVRTC, nvJitLink and the driver, started there, are not usable after a fork: in the eighth session
    # every mutant reaching them crashed (SIGSEGV) or failed, equivalents included. So a first mutmut
    # process does the mapping and exits (the name matches nothing), and the run starts in a fresh one,
    # which only collects the tests: collecting starts none of them (tests/test_mutation_harness.py).
    # MUTATION_MAPPED=1: the carried mapping.tgz came from a call there on this commit's tests, so the step is
    # skipped (it lists every test serially: 2-3 minutes there in the eleventh session); a test id it lacks
    # would be mapped by the run's own process, whose forks then cannot use NVRTC: don't set it otherwise
    if [ "${MUTATION_MAPPED:-0}" = 1 ] && [ -f "$here/mapping.tgz" ]; then
        echo "mapping: carried, not checked (MUTATION_MAPPED=1)"
    else
        SKIP_CLEAN=1 $py scripts/mutmut_run.py run 'cuda_fatbin._term.x_nothing*' > /tmp/mapping.log 2>&1
        grep -a "new tests\|obsolete" /tmp/mapping.log
    fi
    echo "mapping done at $(( $(date +%s) - start )) s"
    # one archive, with the test ids collected there (each is over the 16 MiB a returned file may have)
    tar czf "${OUT:-/tmp}/mapping.tgz" -C mutants mutmut-stats.json $( [ -f /tmp/collected.txt ] && echo -C /tmp collected.txt)
    echo "deselected (they fail unmutated here): $deselect"
    set -f
    # its own process group, output to a file: at the deadline the whole group goes (the test processes it
    # forked too, which would otherwise hold a pipe open past the device call's limit)
    # the tests that run `python -m cuda_fatbin` in a subprocess find the package (the mutants' copy, which
    # the mutant under test, named in the environment, switches) instead of failing for every mutant
    PYTHONPATH=$root/mutants/src:${PYTHONPATH:-} SKIP_CLEAN=1 \
        $py -c 'import os, sys; os.setpgid(0, 0); os.execv(sys.executable, [sys.executable, *sys.argv[1:]])' \
        scripts/mutmut_run.py run --max-children "$jobs" $(cat "$here/names.txt") \
        > /tmp/mutmut.log 2>&1 &
    pid=$!
    # every 10 s: a copy of each meta file that reads whole (the SIGKILL below can land while mutmut rewrites
    # one: in the eleventh session it left _cli's empty, and that call's verdicts were lost), and the progress
    rm -rf /tmp/metasnap; mkdir -p /tmp/metasnap
    snap() {
        $py -c 'import json, shutil, sys
for f in sys.argv[1:]:
    try:
        json.load(open(f))
    except (OSError, ValueError):
        continue
    shutil.copy(f, "/tmp/metasnap/" + f.replace("/", "%"))' mutants/src/cuda_fatbin/*.meta
        printf '%s %s\n' "$(date +%T)" "$(tail -c 300 /tmp/mutmut.log | tr '\r' '\n' | grep -a . | tail -n 1)" \
            >> "${OUT:-/tmp}/progress.log"
    }
    n=0
    while kill -0 "$pid" 2> /dev/null && [ $(( $(date +%s) - start )) -lt $(( budget - 20 )) ]; do
        sleep 2; n=$(( n + 1 )); [ $(( n % 5 )) = 0 ] && snap
    done
    # SIGKILL, not SIGINT: an interrupt reached the tests still running, whose in-process command then
    # failed ("interrupted", exit 130), and those failures were logged and counted as kills (tenth session);
    # mutmut saves each verdict as it comes, so the ones finished are kept
    kill -KILL -- "-$pid" 2> /dev/null; wait "$pid" 2> /dev/null
    # a meta the kill cut short: its last whole copy (the verdicts of its last 10 s are lost)
    $py -c 'import json, os, shutil, sys
for f in sys.argv[1:]:
    try:
        json.load(open(f))
    except (OSError, ValueError):
        copy = "/tmp/metasnap/" + f.replace("/", "%")
        if os.path.exists(copy):
            shutil.copy(copy, f)
            print(f + ": cut short by the kill, its last whole copy kept")' mutants/src/cuda_fatbin/*.meta
    tr '\r' '\n' < /tmp/mutmut.log | grep -av '^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]' > "${OUT:-/tmp}/mutmut.log"
    tail -n 5 "${OUT:-/tmp}/mutmut.log"
    find mutants -name '*.meta' | tar czf "${OUT:-/tmp}/meta.tgz" -T -
    echo "done in $(( $(date +%s) - start )) s"
    ;;
*)
    echo "usage: $0 pack CHECKOUT NAME... | run SECONDS | why NAME..." >&2
    exit 2
    ;;
esac
