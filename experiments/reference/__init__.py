"""The bundled reference measurements (installed as ``simnuma.studies.reference``; see ``simnuma.bundled``)."""
