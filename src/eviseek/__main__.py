"""``python -m eviseek`` runs the CLI."""

from eviseek.cli.main import main

main()
