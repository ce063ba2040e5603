"""amqp_jms.mq."""
