from xtyserver.cli.main import main

raise SystemExit(main())
