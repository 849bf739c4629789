"""The stages run in order: a spec file to a checked Plan (`compile`: load, resolve,
check, lower, check the Plan), the Plan to the artifacts of the named targets (`emit`),
and a build written into a directory hostc owns (`build`).

Below the API and the fleet runner, so that both run the one pipeline: `hostc.api`
re-exports these functions as they are, and `hostc.fleet` compiles every host and
every side of a diff through them.  Nothing here imports the API.
"""
