"""pbr reads setup.cfg, requirements.txt and the git history (version,
AUTHORS, ChangeLog); see pyproject.toml for the build backend."""

import setuptools

setuptools.setup(pbr=True)
