from kope.cli import main

main()
