"""The bundled boards (installed as the data package ``simnuma.topologies``; see ``simnuma.bundled``)."""
