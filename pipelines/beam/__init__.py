"""Running the Beam jobs: pipeline options, the local runner, starting and guarding a job."""
