import sys

from cudagloss.commands.main import main

sys.exit(main())
