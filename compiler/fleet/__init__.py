"""Many hosts per command and specs at another revision: the selection of hosts
(`selection`), the runner that builds, checks or plans each in a process pool
(`runner`), the sides of `hostc diff` from the working tree, a plan.json or a git
revision (`diffinputs`, `gitrev`), and the review of a whole fleet (`fleetdiff`,
`diffskip`).

It runs the pipeline (`hostc.pipeline`) and shows through the review pages
(`hostc.report.review`); it never imports the API, which re-exports what the CLI
needs (`hostc.api.fleet`, `hostc.api.plan_diff`, `hostc.api.fleet_diff`).
"""
