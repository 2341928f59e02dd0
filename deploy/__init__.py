"""Serving the app: one Streamlit server (deploy/app_server.py), N replicas behind nginx
(run_replicas.py, make_nginx_conf.py) and the Docker image (Dockerfile). See
deploy/README.md and docs/deployment.md.

A package so that bench/ and the tests import `deploy.app_server`; the modules with a
command line still run as scripts (`python deploy/run_replicas.py --help`).
"""
