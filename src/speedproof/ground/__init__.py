"""What every stage of the judge stands on: the error types, the sandbox, one accounted process
run, a built program and one workload's invocation of it, the toolchain contract, and git.

Nothing here imports a stage of the judge or anything above it (the layers contract in
pyproject.toml); the manifest's schema is read here, not judged.
"""
