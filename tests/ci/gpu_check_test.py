#!/usr/bin/env python3
"""Checks ci/gpu_check.sh without a GPU, on stub programs.

A scratch folder holds a stub build (GPU_CHECK_BUILD: omni-bench,
omnib-microbench, tests/omnib_tests, tests/omni-bench-sabotage) and stub
nvidia-smi and ncu first on PATH. Each stub appends its name and arguments to
a call log and prints what the real program prints where the script reads it
(the table rows, "omni vs best dense", copy_fraction lines, gtest's totals);
environment variables make them fail or hang. A real ELF program linked
against a scratch shared library stands in for a program whose library the
GPU machine lacks. Run as root, the unwritable-parent case drops to nobody
(setpriv) on a copy of the script.

Usage: tests/ci/gpu_check_test.py --script ci/gpu_check.sh --cxx COMPILER [unittest args]
e.g. ... GpuCheck.test_failing_ncu_is_a_skip
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

ARGS = None

OMNI_BENCH = r'''#!/usr/bin/env bash
echo "omni-bench $*" >>"$STUB_LOG"
density=1 json=""
while [ $# -gt 0 ]; do
  case $1 in --density) density=$2; shift ;; -J) json=$2; shift ;; esac
  shift
done
[ -n "$json" ] && echo '{"stub": true}' >"$json"
if [ "$density" = "${STUB_FAIL_DENSITY:-}" ]; then echo "stub omni-bench: failing at density $density" >&2; exit "${STUB_FAIL_EXIT:-3}"; fi
echo "# omni-bench 0.1.0 (stub)"
echo "     size(B)       count   type algo                      dens blkdens   union    time(us)"
echo "   268435456    67108864  float omni                    $density  0.1000  0.3430     49185.5"
echo "   268435456    67108864  float ps                      $density  0.1000  0.3430    136897.9"
echo "   268435456    67108864  float nccl                    $density  0.1000  0.3430    440738.7"
echo "#   268435456 omni                        5     49.524    52.7%"
echo "# omni vs best dense   : 2.78x (ps) at density $density"
'''

MICROBENCH = r'''#!/usr/bin/env bash
echo "omnib-microbench $*" >>"$STUB_LOG"
for a in "$@"; do
  case $a in --benchmark_out=*) echo '{"benchmarks": []}' >"${a#--benchmark_out=}" ;; esac
done
echo "BM_GpuMemcpyD2D/manual_time        150 us   150 us   1000 bytes_per_second=3.6T/s"
echo "BM_GpuCompact/block:256/permille:10/manual_time   185 us  194 us  79 copy_fraction=0.364034/s"
echo "BM_GpuScatter/block:256/permille:10/zero_rest:0/manual_time   90 us  94 us  79 ship_fraction=0.5/s"
[ -n "${STUB_MICROBENCH_ERROR:-}" ] && echo "BM_GpuScatter/block:32/permille:10/zero_rest:0/manual_time   ERROR OCCURRED: 'no CUDA device'"
exit 0
'''

TESTS = r'''#!/usr/bin/env bash
echo "omnib_tests $* binary=$OMNIB_TEST_BINARY sabotage=$OMNIB_TEST_SABOTAGE_BINARY" >>"$STUB_LOG"
sleep "${STUB_TESTS_SLEEP:-0}"
echo "[==========] 302 tests from 20 test suites ran. (48000 ms total)"
echo "[  PASSED  ] 300 tests."
echo "[  SKIPPED ] 2 tests, listed below:"
'''

SABOTAGE = r'''#!/usr/bin/env bash
echo "omni-bench-sabotage $*" >>"$STUB_LOG"
'''

NVIDIA_SMI = r'''#!/usr/bin/env bash
echo "nvidia-smi $*" >>"$STUB_LOG"
echo "GPU 0: Stub H200 (UUID: GPU-stub)"
'''

NCU = r'''#!/usr/bin/env bash
echo "ncu $*" >>"$STUB_LOG"
if [ "${STUB_NCU_EXIT:-0}" != 0 ]; then echo "==ERROR== stub ncu failed to load" >&2; exit "$STUB_NCU_EXIT"; fi
[ -n "${STUB_NCU_NO_KERNEL:-}" ] && { echo "==WARNING== No kernels were profiled."; exit 0; }
echo '==PROF== Profiling "compact_small_blocks_kernel": 0%....50%....100% - 18 passes'
echo "    Duration                        us       185.02"
echo "    Memory Throughput                %        36.40"
'''

LIBRARY = 'int omnib_stub_answer(void) { return 42; }\n'
PROGRAM = 'int omnib_stub_answer(void);\nint main(void) { return omnib_stub_answer() == 42 ? 0 : 1; }\n'

BUDGETED = ['gpu-tests', 'device-allreduce-0.01', 'device-allreduce-0.1', 'device-allreduce-1',
            'device-inplace-block5000', 'microbench', 'profile-compaction']
EVERY_STEP = ['libraries', 'gpu-info'] + BUDGETED


def write_program(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)
    os.chmod(path, 0o755)


class GpuCheck(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix='omnib-gpu-check-test.')
        os.chmod(self.scratch, 0o755)
        self.build = os.path.join(self.scratch, 'build')
        self.bin = os.path.join(self.scratch, 'bin')
        write_program(os.path.join(self.build, 'omni-bench'), OMNI_BENCH)
        write_program(os.path.join(self.build, 'omnib-microbench'), MICROBENCH)
        write_program(os.path.join(self.build, 'tests', 'omnib_tests'), TESTS)
        write_program(os.path.join(self.build, 'tests', 'omni-bench-sabotage'), SABOTAGE)
        write_program(os.path.join(self.bin, 'nvidia-smi'), NVIDIA_SMI)
        write_program(os.path.join(self.bin, 'ncu'), NCU)
        self.calls = os.path.join(self.scratch, 'calls.log')
        self.out = os.path.join(self.scratch, 'out')

    def tearDown(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def run_check(self, env=None, user=None, timeout=120, script=None):
        full = {k: v for k, v in os.environ.items()
                if not k.startswith(('GPU_CHECK_', 'STUB_', 'LD_LIBRARY_PATH'))}
        full.update({'GPU_CHECK_BUILD': self.build, 'STUB_LOG': self.calls,
                     'PATH': self.bin + os.pathsep + os.environ.get('PATH', '/usr/bin:/bin')})
        full.update(env or {})
        command = [script or ARGS.script, self.out]
        if user is not None:
            command = ['setpriv', '--reuid=%d' % user, '--regid=%d' % user, '--clear-groups'] + command
        start = time.monotonic()
        run = subprocess.run(command, env=full, capture_output=True, text=True, timeout=timeout)
        self.elapsed = time.monotonic() - start
        self.output = run.stdout + run.stderr
        return run.returncode

    def summary(self):
        with open(os.path.join(self.out, 'summary.txt')) as f:
            return f.read()

    def statuses(self):
        """Each step's status text, in summary order, keyed by step name."""
        found = re.findall(r'^== ([\w.-]+): (.*) \((\d+) s\)$', self.summary(), re.M)
        return {name: status for name, status, _ in found}, [name for name, _, _ in found]

    def calls_made(self):
        if not os.path.exists(self.calls):
            return []
        with open(self.calls) as f:
            return f.read().splitlines()

    def assert_only_summary_and_tarball(self):
        self.assertEqual(sorted(os.listdir(self.out)), ['gpu-results.tar.gz', 'summary.txt'], self.output)

    def tarball_names(self):
        with tarfile.open(os.path.join(self.out, 'gpu-results.tar.gz')) as t:
            return set(t.getnames())

    def test_every_step_passes_in_order_with_its_figures(self):
        rc = self.run_check()
        self.assertEqual(rc, 0, self.output)
        self.assert_only_summary_and_tarball()
        status, order = self.statuses()
        self.assertEqual(order, EVERY_STEP, self.summary())
        for name in EVERY_STEP:
            self.assertEqual(status[name], 'ok', name)
        text = self.summary()
        for density in ['0.01', '0.1', '1']:
            for algo in ['omni', 'ps', 'nccl']:
                self.assertRegex(text, r'(?m)^ +268435456 +67108864 +float %s +%s ' % (algo, density))
            self.assertIn('omni vs best dense   : 2.78x (ps) at density %s' % density, text)
        self.assertNotIn('#   268435456 omni', text, 'the profile table is not a result row')
        self.assertIn('copy_fraction=0.364034/s', text)
        self.assertIn('ship_fraction=0.5/s', text)
        self.assertIn('[  PASSED  ] 300 tests.', text)
        self.assertIn('GPU 0: Stub H200', text)
        self.assertIn('==PROF== Profiling "compact_small_blocks_kernel"', text)
        self.assertRegex(text, r'(?m)^== total: \d+ s of a 450 s budget; every step that ran passed$')

        calls = self.calls_made()
        programs = [c.split()[0] for c in calls]
        self.assertEqual(programs, ['nvidia-smi', 'nvidia-smi', 'omnib_tests'] + ['omni-bench'] * 4
                         + ['omnib-microbench', 'ncu'], calls)
        tests_call = calls[2]
        self.assertIn("--gtest_filter=Gpu*:*GpuCompaction*:*CudaBlockIo*:DeviceEndToEnd*:Nccl*:CliDevice*", tests_call)
        self.assertIn('binary=%s/omni-bench ' % self.build, tests_call)
        self.assertIn('sabotage=%s/tests/omni-bench-sabotage' % self.build, tests_call)
        for call, density in zip(calls[3:6], ['0.01', '0.1', '1']):
            self.assertIn('allreduce --device cuda --algo omni,ps,nccl --density %s --nodes 4 -b 256M -e 256M' % density, call)
            self.assertIn('--profile', call)
        self.assertIn('--block-size 5000 --inplace', calls[6])
        self.assertRegex(calls[7], r'--benchmark_min_time=0\.0\d*\b')
        self.assertIn('--clock-control none', calls[8])
        self.assertIn('--kernel-name regex:compact ', calls[8])
        self.assertIn('%s/omnib-microbench' % self.build, calls[8])

        names = self.tarball_names()
        expected = {'gpu-results/summary.txt', 'gpu-results/gpu-info.log', 'gpu-results/microbench.json',
                    'gpu-results/ldd-omni-bench.txt'}
        expected |= {'gpu-results/%s.log' % name for name in BUDGETED}
        expected |= {'gpu-results/%s.json' % name for name in BUDGETED if name.startswith('device-')}
        self.assertEqual(expected - names, set(), sorted(names))
        with tarfile.open(os.path.join(self.out, 'gpu-results.tar.gz')) as t:
            self.assertEqual(t.extractfile('gpu-results/summary.txt').read().decode(), text)

    def test_failing_ncu_is_a_skip(self):
        rc = self.run_check({'STUB_NCU_EXIT': '1'})
        self.assertEqual(rc, 0, self.output)
        status, _ = self.statuses()
        self.assertRegex(status['profile-compaction'], r'^skipped: ncu failed \(exit 1\)$')
        self.assertTrue(all(status[n] == 'ok' for n in EVERY_STEP if n != 'profile-compaction'), status)
        self.assertIn('ncu', self.calls_made()[-1])
        self.assert_only_summary_and_tarball()

    def test_an_ncu_that_profiles_nothing_is_a_skip(self):
        rc = self.run_check({'STUB_NCU_NO_KERNEL': '1'})
        self.assertEqual(rc, 0, self.output)
        status, _ = self.statuses()
        self.assertEqual(status['profile-compaction'], 'skipped: ncu profiled no kernel matching regex:compact')

    def test_missing_ncu_is_a_skip(self):
        rc = self.run_check({'GPU_CHECK_NCU': os.path.join(self.scratch, 'no-such-ncu')})
        self.assertEqual(rc, 0, self.output)
        status, _ = self.statuses()
        self.assertTrue(status['profile-compaction'].startswith('skipped: ncu not found'), status)
        self.assertNotIn('ncu', [c.split()[0] for c in self.calls_made()])
        self.assert_only_summary_and_tarball()

    def compile_with_library(self):
        """A real program needing libomnibstub.so, which only LD_LIBRARY_PATH finds."""
        lib_dir = os.path.join(self.scratch, 'libs')
        os.makedirs(lib_dir)
        for name, text in [('stub_lib.c', LIBRARY), ('stub_main.c', PROGRAM)]:
            with open(os.path.join(self.scratch, name), 'w') as f:
                f.write(text)
        subprocess.run([ARGS.cxx, '-x', 'c', '-shared', '-fPIC', '-o', os.path.join(lib_dir, 'libomnibstub.so'),
                        os.path.join(self.scratch, 'stub_lib.c')], check=True)
        program = os.path.join(self.build, 'omnib-microbench')
        os.remove(program)
        subprocess.run([ARGS.cxx, '-x', 'c', '-o', program, os.path.join(self.scratch, 'stub_main.c'),
                        '-L' + lib_dir, '-lomnibstub'], check=True)
        ldd = subprocess.run(['ldd', program], capture_output=True, text=True).stdout
        self.assertRegex(ldd, r'libomnibstub\.so => not found')
        return lib_dir

    def test_a_missing_library_stops_the_check_before_any_step(self):
        self.compile_with_library()
        rc = self.run_check()
        self.assertEqual(rc, 1, self.output)
        self.assertEqual(self.calls_made(), [], 'nothing may run')
        status, order = self.statuses()
        self.assertEqual(order, ['libraries'], self.summary())
        self.assertEqual(status['libraries'], 'FAILED')
        text = self.summary()
        self.assertIn('%s/omnib-microbench needs libomnibstub.so: not found' % self.build, text)
        self.assertIn('Nothing was run.', text)
        self.assertIn('ci/bundle_libs.sh', text)
        self.assertIn('LD_LIBRARY_PATH', text)
        self.assertIn('libomnibstub.so', self.output, 'the reason is printed too')
        self.assert_only_summary_and_tarball()

    def test_a_library_found_through_ld_library_path_passes(self):
        lib_dir = self.compile_with_library()
        # the compiled stand-in replaced the microbench stub: it runs and exits 0
        rc = self.run_check({'LD_LIBRARY_PATH': lib_dir})
        self.assertEqual(rc, 0, self.output)
        status, _ = self.statuses()
        self.assertEqual(status['libraries'], 'ok')
        self.assertEqual(status['microbench'], 'ok')

    def test_a_missing_program_stops_the_check(self):
        os.remove(os.path.join(self.build, 'tests', 'omni-bench-sabotage'))
        rc = self.run_check()
        self.assertEqual(rc, 1, self.output)
        self.assertEqual(self.calls_made(), [])
        text = self.summary()
        self.assertIn('%s/tests/omni-bench-sabotage is missing' % self.build, text)
        self.assertIn('Build them first', text)
        self.assertNotIn('ci/bundle_libs.sh', text, 'a missing program is not a missing library')

    def test_a_budget_of_zero_skips_every_step_after_gpu_info(self):
        rc = self.run_check({'GPU_CHECK_BUDGET': '0'})
        self.assertEqual(rc, 0, self.output)
        status, order = self.statuses()
        self.assertEqual(order, EVERY_STEP)
        self.assertEqual(status['gpu-info'], 'ok')
        for name in BUDGETED:
            self.assertTrue(status[name].startswith('skipped: budget'), (name, status[name]))
        self.assertEqual([c.split()[0] for c in self.calls_made()], ['nvidia-smi', 'nvidia-smi'])
        self.assert_only_summary_and_tarball()

    def test_a_step_stops_at_the_budget_and_the_rest_are_skipped(self):
        rc = self.run_check({'GPU_CHECK_BUDGET': '3', 'STUB_TESTS_SLEEP': '60'})
        self.assertEqual(rc, 1, self.output)
        self.assertLess(self.elapsed, 20, 'the budget bounds the step')
        status, _ = self.statuses()
        self.assertRegex(status['gpu-tests'], r"^FAILED: timed out at the budget's [123] s$")
        for name in BUDGETED[1:]:
            self.assertTrue(status[name].startswith('skipped: budget'), (name, status[name]))
        self.assert_only_summary_and_tarball()

    def test_a_step_stops_at_the_step_limit_and_the_rest_run(self):
        rc = self.run_check({'GPU_CHECK_STEP_LIMIT': '1', 'STUB_TESTS_SLEEP': '60'})
        self.assertEqual(rc, 1, self.output)
        self.assertLess(self.elapsed, 30)
        status, _ = self.statuses()
        self.assertEqual(status['gpu-tests'], "FAILED: timed out at the limit's 1 s")
        for name in BUDGETED[1:]:
            self.assertEqual(status[name], 'ok', name)

    def test_a_failing_run_fails_the_check_and_the_rest_still_run(self):
        rc = self.run_check({'STUB_FAIL_DENSITY': '0.01'})
        self.assertEqual(rc, 1, self.output)
        status, _ = self.statuses()
        self.assertEqual(status['device-allreduce-0.01'], 'FAILED: exit 3')
        for name in EVERY_STEP:
            if name != 'device-allreduce-0.01':
                self.assertEqual(status[name], 'ok', name)
        self.assertIn('device-allreduce-0.01.log', ' '.join(self.tarball_names()))

    def test_a_run_exiting_255_is_a_failure_not_a_skip(self):
        rc = self.run_check({'STUB_FAIL_DENSITY': '1', 'STUB_FAIL_EXIT': '255'})
        self.assertEqual(rc, 1, self.output)
        status, _ = self.statuses()
        self.assertEqual(status['device-allreduce-1'], 'FAILED: exit 255')

    def test_a_terminated_check_still_packs_what_it_has(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(('GPU_CHECK_', 'STUB_'))}
        env.update({'GPU_CHECK_BUILD': self.build, 'STUB_LOG': self.calls, 'STUB_TESTS_SLEEP': '60',
                    'PATH': self.bin + os.pathsep + os.environ.get('PATH', '/usr/bin:/bin')})
        check = subprocess.Popen([ARGS.script, self.out], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 30
            while not any(c.startswith('omnib_tests') for c in self.calls_made()):
                self.assertLess(time.monotonic(), deadline, 'the GPU tests never started')
                time.sleep(0.05)
            check.terminate()
            self.output = check.communicate(timeout=15)[0]  # not the 60 s the step would take
            rc = check.returncode
        finally:
            if check.poll() is None:
                check.kill()
                check.wait()
        self.assertEqual(rc, 1)
        self.assert_only_summary_and_tarball()
        self.assertIn('== interrupted by a signal', self.summary())
        self.assertIn('gpu-results/gpu-info.log', self.tarball_names())

    def test_a_benchmark_error_fails_the_microbench_step(self):
        rc = self.run_check({'STUB_MICROBENCH_ERROR': '1'})  # the program still exits 0
        self.assertEqual(rc, 1, self.output)
        status, _ = self.statuses()
        self.assertEqual(status['microbench'], "FAILED: 1 log lines match 'ERROR OCCURRED'")
        self.assertEqual(status['profile-compaction'], 'ok')
        self.assertIn("zero_rest:0/manual_time   ERROR OCCURRED: 'no CUDA device'", self.summary())

    def test_an_unwritable_parent_folder_is_fine(self):
        parent = os.path.join(self.scratch, 'parent')
        os.makedirs(parent)
        self.out = os.path.join(parent, 'out')
        os.makedirs(self.out)
        user = None
        # A copy of the script, which needs nothing else of the checkout: the
        # checkout may be unreadable to the user it runs as.
        script = os.path.join(self.scratch, 'checkout', 'ci', 'gpu_check.sh')
        os.makedirs(os.path.dirname(script))
        shutil.copy(ARGS.script, script)
        if os.geteuid() == 0:  # root writes anywhere: run the check as nobody
            if shutil.which('setpriv') is None:
                self.skipTest('running as root without setpriv to drop to nobody')
            user = 65534
            os.chown(self.out, user, user)
            open(self.calls, 'w').close()  # the stubs append to it
            os.chown(self.calls, user, user)
        os.chmod(parent, 0o555)
        try:
            rc = self.run_check(user=user, script=script)
        finally:
            os.chmod(parent, 0o755)
        self.assertEqual(rc, 0, self.output)
        self.assert_only_summary_and_tarball()
        self.assertEqual(os.listdir(parent), ['out'])


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--script', required=True, help='ci/gpu_check.sh')
    parser.add_argument('--cxx', required=True, help='a C/C++ compiler driver, for the missing-library program')
    ARGS, rest = parser.parse_known_args()
    ARGS.script = os.path.abspath(ARGS.script)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == '__main__':
    main()
