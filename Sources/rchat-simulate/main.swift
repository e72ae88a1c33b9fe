import Foundation
import RChatSimulation

SimulateCommand.main(CommandLine.arguments, environment: ProcessInfo.processInfo.environment)
