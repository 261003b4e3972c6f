from speedproof.cli import main

main()
