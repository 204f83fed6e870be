#!/bin/bash
# The GPU checks in one run (see README.md): conformance, random opts, JIT and BEAM on CUDA and on the GPU's OpenCL, in
# parallel; then the timings alone. Logs go to $OUT (default /tmp/gpu-out), a summary to stdout.
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1 TINYBOOK_CACHE=/tmp/tbcache OUT=${OUT:-/tmp/gpu-out} L=/tmp/gpu-logs; mkdir -p $OUT $L
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; lscpu | grep "Model name"; } > $OUT/probe.log 2>&1
if ls tools/gpu/whl/*.whl > /dev/null 2>&1; then  # wheels carried to a machine without a registry
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site tools/gpu/whl/*.whl >> $OUT/probe.log 2>&1
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PYTHONPATH:$PWD
ocl=$(find / -xdev -name "libnvidia-opencl.so.1" 2>/dev/null | head -1)  # NVIDIA's OpenCL, when the image lacks its ICD file
if [ -n "$ocl" ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then mkdir -p /etc/OpenCL/vendors; echo "$ocl" > /etc/OpenCL/vendors/nvidia.icd; fi
python3 -c "from tinybook.device import main; main(['devices'])" >> $OUT/probe.log 2>&1
for d in CUDA CL; do
  TEST_DEVICES=$d timeout 240 python3 tools/gpu/run_nb.py nbs/test_backends.ipynb > $L/tb_$d.log 2>&1 &
  TEST_DEVICES=$d timeout 240 python3 tools/gpu/run_nb.py nbs/test_devices.ipynb > $L/td_$d.log 2>&1 &
  GDEV=$d timeout 240 python3 tools/gpu/checks.py jit random_opts > $L/ck_$d.log 2>&1 &
done
timeout 240 python3 tools/gpu/checks.py beam > $L/beam.log 2>&1 &
timeout 240 python3 tools/gpu/run_nb.py nbs/05c_cuda.ipynb --flags cuda > $L/nb05c.log 2>&1 &
wait
cat $L/tb_*.log > $OUT/tb.log; cat $L/td_*.log > $OUT/td.log; cat $L/ck_*.log $L/beam.log $L/nb05c.log > $OUT/checks.log
cat $OUT/probe.log; grep -E "FAILED|failed cells|JIT on|wrong|BEAM|training|^matmul" $OUT/tb.log $OUT/td.log $OUT/checks.log | cut -c1-300
timeout 200 python3 tools/gpu/checks.py variants matmul elementwise > $OUT/bench.log 2>&1
cat $OUT/bench.log
