"""A model stepped from outside: `flexmbs.Simulator` (inputs set between steps, outputs
read after each; `simulator`), and the Functional Mock-up Unit that wraps it for other
tools (`fmu` exports it, `fmu_slave` runs inside it)."""
