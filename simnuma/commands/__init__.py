"""Command groups of the ``simnuma`` command line, one module each."""
