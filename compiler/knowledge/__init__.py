"""What hostc knows about the systems it writes for, one module per domain.

`arch` (machine architectures), `vendor` (CPU vendors), `distro` (distributions and
what each release ships), `kernel` (kernel releases, sysctls, parameters), `kubelet`
(kubelet options and quantities), `runtime` (container runtimes), `charsets` (what
every reader of an artifact takes literally).  Every table is a `Table`: each row
carries its source (a URL, a kernel commit, a man page section, or what it was
verified against), and `tests/test_knowledge.py` refuses a row without one.  The
package imports nothing else of hostc, so spec, topology, Plan and targets may all
read it.
"""
