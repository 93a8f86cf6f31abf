// The whole program is one command; see ServerCommand.swift.
ServerCommand.main()
