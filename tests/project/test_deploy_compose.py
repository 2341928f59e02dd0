"""deploy/compose.yaml, checked for form (no Docker engine runs here or in CI): three
services, the app built from deploy/Dockerfile with the poll's Redis URL and a shared cookie
secret, nginx with the configuration deploy/make_nginx_conf.py generates for it."""

from __future__ import annotations

from pathlib import Path

import yaml

from deploy.make_nginx_conf import render

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_compose_runs_replicas_behind_nginx_sharing_redis() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert set(services) == {"redis", "app", "nginx"}
    app = services["app"]
    build = app["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    assert app["deploy"]["replicas"] >= 2
    assert app["environment"]["ATTENTION_POLL_REDIS_URL"] == "redis://redis:6379/0"
    assert "STREAMLIT_SERVER_COOKIE_SECRET" in app["environment"]
    assert app["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "--save" in services["redis"]["command"]
    nginx = services["nginx"]
    assert nginx["depends_on"]["app"]["condition"] == "service_healthy"
    (volume,) = nginx["volumes"]
    source, target, _ = volume.split(":")
    assert target == "/etc/nginx/nginx.conf"
    assert nginx["ports"] == ["8080:8080"]
    shipped = (DEPLOY / source).read_text(encoding="utf-8")
    assert shipped == render([8501], host="app", listen="0.0.0.0:8080")  # not hand-edited
    assert "server app:8501" in shipped and "hash $st_route consistent" in shipped
