"""The package version, in a leaf module.

Every layer that announces the version (the client's connection metadata, the provider's and the
broker's AMQP ``open`` properties, the command line) imports it from here, so that importing one
layer (the broker, say) does not pull in another (the client) through the top package.
"""

__version__ = "0.1.0"
