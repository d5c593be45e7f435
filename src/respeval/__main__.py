import sys

from respeval.cli import main

sys.exit(main())
