"""The web UI: a Streamlit app that talks to the HTTP API, never to the pipelines."""
