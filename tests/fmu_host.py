"""An importing tool's use of one flexmbs FMU in one process, as fmpy hosts it: run as
`python fmu_host.py UNIT.fmu CYCLES` by tests/test_fmu_hosts.py.

It runs the unit
- with fmpy.simulate_fmu CYCLES times (each run extracts and loads its own copy of the
  unit's binary, and leaves it loaded, as simulate_fmu does);
- instantiated, run and freed CYCLES times from one extracted copy;
- as two instances side by side, stepped in turn with different inputs;
- as two instances stepped at once in two threads;
and prints, as JSON, each run's final outputs and the process's resident memory after
each cycle. Its exit status is the host's: 0 when all went well and the interpreter
and the C runtime finished cleanly.

`python fmu_host.py UNIT.fmu once` instantiates and frees the unit once and exits with
its binary still loaded (as simulate_fmu leaves it), for a run under valgrind.
"""

import json
import resource
import sys
import threading

import fmpy
from fmpy.fmi2 import FMU2Slave

STOP = 0.04
STEP = 0.002
OUTPUTS = ("theta", "bend", "current")


def volts(t, gain):
    """The input's law: a voltage step of `gain` V at t = 0."""
    return gain


def resident_mb():
    """The process's peak resident memory, MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class Unit:
    """One instance of the unit, stepped by hand as an importer steps it."""

    def __init__(self, description, folder, name):
        self.refs = {v.name: v.valueReference for v in description.modelVariables}
        self.slave = FMU2Slave(
            guid=description.guid,
            unzipDirectory=folder,
            modelIdentifier=description.coSimulation.modelIdentifier,
            instanceName=name,
        )
        self.slave.instantiate()
        self.slave.setupExperiment(startTime=0.0, stopTime=STOP)
        self.slave.enterInitializationMode()
        self.slave.exitInitializationMode()
        self.time = 0.0

    def step(self, gain):
        self.slave.setReal([self.refs["motor.voltage"]], [volts(self.time, gain)])
        self.slave.doStep(self.time, STEP)
        self.time += STEP

    def outputs(self):
        return self.slave.getReal([self.refs[n] for n in OUTPUTS])

    def free(self):
        self.slave.terminate()
        self.slave.freeInstance()


def run_by_hand(description, folder, name, gain):
    """One instance from start to STOP, its final outputs."""
    unit = Unit(description, folder, name)
    while unit.time < STOP - STEP / 2:
        unit.step(gain)
    out = unit.outputs()
    unit.free()
    return out


def instantiate_once(fmu):
    """Instantiates and frees the unit, its library left loaded until the exit."""
    description = fmpy.read_model_description(fmu)
    slave = FMU2Slave(
        guid=description.guid,
        unzipDirectory=fmpy.extract(fmu),
        modelIdentifier=description.coSimulation.modelIdentifier,
        instanceName="once",
    )
    slave.instantiate()
    slave.freeInstance()
    return slave


def main():
    if sys.argv[2] == "once":
        global LOADED
        LOADED = instantiate_once(sys.argv[1])
        return
    fmu, cycles = sys.argv[1], int(sys.argv[2])
    description = fmpy.read_model_description(fmu)
    report = {"simulate_fmu": [], "by_hand": [], "memory_mb": []}
    for _ in range(cycles):
        result = fmpy.simulate_fmu(
            fmu,
            start_time=0.0,
            stop_time=STOP,
            step_size=STEP,
            output_interval=STEP,
            start_values={"motor.voltage": 4.0},
            output=list(OUTPUTS),
        )
        report["simulate_fmu"].append([float(result[n][-1]) for n in OUTPUTS])
        report["memory_mb"].append(resident_mb())
    folder = fmpy.extract(fmu)
    for k in range(cycles):
        report["by_hand"].append(run_by_hand(description, folder, f"cycle{k}", 4.0))
        report["memory_mb"].append(resident_mb())

    first, second = Unit(description, folder, "first"), Unit(description, folder, "second")
    while first.time < STOP - STEP / 2:
        first.step(4.0)
        second.step(-2.0)
    report["side_by_side"] = [first.outputs(), second.outputs()]
    first.free()
    second.free()
    report["alone"] = [
        run_by_hand(description, folder, "alone_a", 4.0),
        run_by_hand(description, folder, "alone_b", -2.0),
    ]

    threaded = {}

    def in_thread(name, gain):
        threaded[name] = run_by_hand(description, folder, name, gain)

    threads = [
        threading.Thread(target=in_thread, args=("thread_a", 4.0)),
        threading.Thread(target=in_thread, args=("thread_b", -2.0)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report["threads"] = [threaded["thread_a"], threaded["thread_b"]]
    print(json.dumps(report))


if __name__ == "__main__":
    main()
