import os
import sys

import pytest

# The tests import the package from the checkout, as installed.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))


@pytest.fixture(scope="session")
def gateway_env():
    """The gateway under test (started by packages/gateway/test/python-sdk.test.ts)."""
    names = ("PORTICO_ENV_URL", "PORTICO_CLIENT_ID", "PORTICO_CLIENT_SECRET")
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{', '.join(missing)} not set: run through packages/gateway/test/python-sdk.test.ts")
        pytest.skip(f"{', '.join(missing)} not set: these tests need a running gateway")
    return {n: os.environ[n] for n in names}
