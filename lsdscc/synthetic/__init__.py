"""Seeded synthetic Reddit data for the benchmarks and the tests: comment bodies
(:mod:`~lsdscc.synthetic.text`) and whole dumps (:mod:`~lsdscc.synthetic.dumps`)."""
