from xtyserver.cli import main

raise SystemExit(main())
