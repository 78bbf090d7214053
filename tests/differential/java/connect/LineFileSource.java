// A minimal file source connector for the differential Connect pipeline test: Maven
// Central has no connect-file 4.4.0, and the 4.1.0 one does not load on a 4.4 worker.
// Each line of "file" becomes one string record in "topic"; the line number is the
// source offset, so a restarted task goes on where the last one stopped.
package rillet.connect;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.SourceConnector;

public class LineFileSource extends SourceConnector {
    private Map<String, String> props;

    @Override
    public String version() {
        return "1";
    }

    @Override
    public void start(Map<String, String> props) {
        this.props = props;
    }

    @Override
    public Class<? extends Task> taskClass() {
        return LineFileSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        return List.of(props);
    }

    @Override
    public void stop() {}

    @Override
    public ConfigDef config() {
        return new ConfigDef()
            .define("file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "file to read")
            .define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "topic to write");
    }
}
