"""The bundled studies (installed as the data package ``simnuma.studies``; see ``simnuma.bundled``)."""
