from hostc.cli import main

main()
