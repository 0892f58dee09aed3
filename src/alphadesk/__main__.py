from alphadesk.cli.app import main

main()
