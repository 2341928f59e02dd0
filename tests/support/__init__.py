"""Helpers shared by the tests, imported one way: `from tests.support.apptest import run_app`."""
